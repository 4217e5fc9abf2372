package dev.kinference.cloud;

/**
 * An external provider cannot be called: its key is missing from the environment or its API dialect is unknown.
 * A gateway skips the provider and tries the next alternate.
 */
public final class ProviderUnavailableException extends Exception {

  private static final long serialVersionUID = 1L;

  public ProviderUnavailableException(String message) {
    super(message);
  }
}
