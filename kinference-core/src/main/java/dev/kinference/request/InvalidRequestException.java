package dev.kinference.request;

/**
 * A request body that cannot be routed. The message names the offending field (for example
 * {@code messages[2].content[0].text}), so that it can be returned to the caller as is.
 */
public abstract sealed class InvalidRequestException extends Exception
    permits MalformedRequestException, RequestTooLargeException {

  private static final long serialVersionUID = 1L;

  private final String field;

  InvalidRequestException(String field, String message) {
    super(field.isEmpty() ? message : field + ": " + message);
    this.field = field;
  }

  /** The JSON path of the offending field, or an empty string for the body as a whole. */
  public String field() {
    return field;
  }

  /** The HTTP status a gateway should answer with: 400 or 413. */
  public abstract int httpStatus();
}
