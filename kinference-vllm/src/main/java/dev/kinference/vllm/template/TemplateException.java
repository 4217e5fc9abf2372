package dev.kinference.vllm.template;

/**
 * A chat template could not be compiled or rendered: a syntax error, a construct this engine does not implement
 * (named in the message, never silently skipped), an undefined value used where Jinja2 would fail, or the
 * template's own {@code raise_exception(...)}.
 */
public final class TemplateException extends Exception {

  private static final long serialVersionUID = 1L;

  public TemplateException(String message) {
    super(message);
  }

  public TemplateException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Unchecked carrier used inside the engine; unwrapped at the API boundary. */
  static final class Unchecked extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unchecked(String message) {
      super(message);
    }
  }

  static Unchecked fail(String message) {
    return new Unchecked(message);
  }
}
