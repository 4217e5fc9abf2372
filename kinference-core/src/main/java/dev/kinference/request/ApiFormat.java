package dev.kinference.request;

/** The wire format a request arrived in; it decides how the body is parsed and how errors are written. */
public enum ApiFormat {
  /** OpenAI {@code POST /v1/chat/completions}. */
  OPENAI_CHAT("/v1/chat/completions"),
  /** OpenAI {@code POST /v1/completions}. */
  OPENAI_COMPLETIONS("/v1/completions"),
  /** Anthropic {@code POST /v1/messages}. */
  ANTHROPIC_MESSAGES("/v1/messages"),
  /** OpenAI {@code POST /v1/responses} (the Responses API, which vLLM serves too). */
  OPENAI_RESPONSES("/v1/responses");

  private final String path;

  ApiFormat(String path) {
    this.path = path;
  }

  /** The HTTP path this format is served on. */
  public String path() {
    return path;
  }
}
