package dev.kinference.routing;

/**
 * What a finished request actually used, as the server reported it (OpenAI {@code usage}, Anthropic
 * {@code message_delta.usage}).
 *
 * @param promptTokens input tokens
 * @param cachedPromptTokens input tokens served from the prefix cache ({@code prompt_tokens_details.cached_tokens})
 * @param completionTokens output tokens
 */
public record Usage(int promptTokens, int cachedPromptTokens, int completionTokens) {

  public Usage {
    if (promptTokens < 0 || cachedPromptTokens < 0 || completionTokens < 0) {
      throw new IllegalArgumentException("token counts must not be negative");
    }
  }

  /** Nothing known. */
  public static final Usage UNKNOWN = new Usage(0, 0, 0);
}
