package dev.kinference.request;

/** The body, or one field of it, exceeds a configured {@link RequestParser} limit (HTTP 413). */
public final class RequestTooLargeException extends InvalidRequestException {

  private static final long serialVersionUID = 1L;

  private final long limit;

  public RequestTooLargeException(String field, long actual, long limit) {
    super(field, "is too large (" + actual + " > limit " + limit + ")");
    this.limit = limit;
  }

  /** The limit that was exceeded, in the unit of the field (bytes, messages or characters). */
  public long limit() {
    return limit;
  }

  @Override
  public int httpStatus() {
    return 413;
  }
}
