package dev.kinference.request;

/** The body is not valid JSON, or a field is missing or has the wrong type or value (HTTP 400). */
public final class MalformedRequestException extends InvalidRequestException {

  private static final long serialVersionUID = 1L;

  public MalformedRequestException(String field, String message) {
    super(field, message);
  }

  @Override
  public int httpStatus() {
    return 400;
  }
}
