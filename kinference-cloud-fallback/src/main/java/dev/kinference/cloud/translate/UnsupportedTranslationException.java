package dev.kinference.cloud.translate;

import dev.kinference.request.ApiFormat;

/**
 * A request uses a feature the target format cannot express, so translating it would change its meaning. The
 * message names the field; a gateway answers 400 if no other upstream can serve the request.
 */
public final class UnsupportedTranslationException extends Exception {

  private static final long serialVersionUID = 1L;

  private final String field;

  public UnsupportedTranslationException(ApiFormat from, ApiFormat to, String field, String message) {
    super(field + ": " + message + " (cannot translate " + from + " to " + to + ")");
    this.field = field;
  }

  /** The JSON path of the field that cannot be translated. */
  public String field() {
    return field;
  }

  /** Always 400: the request is valid in its own format but not servable by this upstream. */
  public int httpStatus() {
    return 400;
  }
}
