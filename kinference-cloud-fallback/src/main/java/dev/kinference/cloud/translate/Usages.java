package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kinference.routing.Usage;
import org.jspecify.annotations.Nullable;

/**
 * Reads token usage as each format reports it. OpenAI's {@code prompt_tokens} include cached tokens
 * ({@code prompt_tokens_details.cached_tokens}); Anthropic's {@code input_tokens} exclude cache reads and cache
 * writes, which are reported beside them. {@link Usage#promptTokens()} is always the whole prompt.
 */
public final class Usages {

  private Usages() {}

  /** The usage of an OpenAI {@code usage} object, or null if the node is not one. */
  public static @Nullable Usage fromOpenAi(@Nullable JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    int prompt = Json.intValue(usage, "prompt_tokens");
    int cached = Json.intValue(usage.path("prompt_tokens_details"), "cached_tokens");
    int completion = Json.intValue(usage, "completion_tokens");
    return new Usage(Math.max(0, prompt), Math.max(0, Math.min(cached, prompt)), Math.max(0, completion));
  }

  /** The usage of an Anthropic {@code usage} object, or null if the node is not one. */
  public static @Nullable Usage fromAnthropic(@Nullable JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    int input = Json.intValue(usage, "input_tokens");
    int read = Json.intValue(usage, "cache_read_input_tokens");
    int write = Json.intValue(usage, "cache_creation_input_tokens");
    int output = Json.intValue(usage, "output_tokens");
    return new Usage(Math.max(0, input + read + write), Math.max(0, read), Math.max(0, output));
  }

  /**
   * The usage of a Responses API {@code usage} object ({@code input_tokens}, which include
   * {@code input_tokens_details.cached_tokens}, and {@code output_tokens}), or null if the node is not one.
   */
  public static @Nullable Usage fromResponses(@Nullable JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    int input = Json.intValue(usage, "input_tokens");
    int cached = Json.intValue(usage.path("input_tokens_details"), "cached_tokens");
    int output = Json.intValue(usage, "output_tokens");
    return new Usage(Math.max(0, input), Math.max(0, Math.min(cached, input)), Math.max(0, output));
  }

  /** Merges a later partial Anthropic report (a {@code message_delta}) into what {@code message_start} said. */
  static Usage mergeAnthropic(Usage start, JsonNode delta) {
    boolean hasInput = delta.has("input_tokens") || delta.has("cache_read_input_tokens");
    int prompt = start.promptTokens();
    int cached = start.cachedPromptTokens();
    if (hasInput) {
      Usage d = fromAnthropic(delta);
      if (d != null && d.promptTokens() > 0) {
        prompt = d.promptTokens();
        cached = d.cachedPromptTokens();
      }
    }
    int output = delta.has("output_tokens") ? Json.intValue(delta, "output_tokens") : start.completionTokens();
    return new Usage(prompt, cached, Math.max(0, output));
  }

  /** The {@code usage} of a complete (non-streaming) response body in {@code format}, or null. */
  public static @Nullable Usage ofResponse(dev.kinference.request.ApiFormat format, JsonNode body) {
    return switch (format) {
      case ANTHROPIC_MESSAGES -> fromAnthropic(body.get("usage"));
      case OPENAI_CHAT, OPENAI_COMPLETIONS -> fromOpenAi(body.get("usage"));
      case OPENAI_RESPONSES -> fromResponses(body.get("usage"));
    };
  }
}
