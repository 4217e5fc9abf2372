package dev.kinference.policy.limits;

/**
 * A shared state store could not be reached in time (connection refused or lost, or a call past its timeout). The
 * call did nothing, or its effect is unknown; {@link ResilientStateStore} decides what the request sees.
 */
public final class StateStoreUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public StateStoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }

  public StateStoreUnavailableException(String message) {
    super(message);
  }
}
