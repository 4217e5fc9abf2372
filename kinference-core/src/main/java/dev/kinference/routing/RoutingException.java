package dev.kinference.routing;

/** A request the router cannot place. Unchecked: a gateway maps the subtypes to HTTP statuses. */
public abstract sealed class RoutingException extends RuntimeException
    permits NoEndpointException, RequestRejectedException {

  private static final long serialVersionUID = 1L;

  RoutingException(String message) {
    super(message);
  }

  /** The HTTP status a gateway should answer with. */
  public abstract int httpStatus();
}
