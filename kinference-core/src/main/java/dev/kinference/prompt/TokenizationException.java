package dev.kinference.prompt;

/** A tokenizer could not produce token ids for a request; the message says why. */
public final class TokenizationException extends Exception {

  private static final long serialVersionUID = 1L;

  public TokenizationException(String message) {
    super(message);
  }

  public TokenizationException(String message, Throwable cause) {
    super(message, cause);
  }
}
