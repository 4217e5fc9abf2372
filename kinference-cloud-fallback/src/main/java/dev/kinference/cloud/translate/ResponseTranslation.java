package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.routing.Usage;
import org.jspecify.annotations.Nullable;

/** Complete (non-streaming) response bodies from one format to the other, and the stop-reason mappings. */
final class ResponseTranslation {

  private ResponseTranslation() {}

  /** OpenAI {@code finish_reason} (with vLLM's matched {@code stop_reason}) to Anthropic {@code stop_reason}. */
  static String anthropicStopReason(@Nullable String finishReason, @Nullable JsonNode matchedStop) {
    if (finishReason == null) {
      return "end_turn";
    }
    return switch (finishReason) {
      case "length" -> "max_tokens";
      case "tool_calls", "function_call" -> "tool_use";
      case "content_filter" -> "refusal";
      case "stop" -> matchedStop != null && matchedStop.isTextual() ? "stop_sequence" : "end_turn";
      default -> "end_turn";
    };
  }

  /** Anthropic {@code stop_reason} to OpenAI {@code finish_reason}. */
  static String openAiFinishReason(@Nullable String stopReason) {
    if (stopReason == null) {
      return "stop";
    }
    return switch (stopReason) {
      case "max_tokens", "model_context_window_exceeded" -> "length";
      case "tool_use" -> "tool_calls";
      case "refusal" -> "content_filter";
      default -> "stop";
    };
  }

  static ObjectNode anthropicUsage(Usage u) {
    ObjectNode usage = Json.object();
    usage.put("input_tokens", u.promptTokens() - u.cachedPromptTokens());
    usage.put("cache_creation_input_tokens", 0);
    usage.put("cache_read_input_tokens", u.cachedPromptTokens());
    usage.put("output_tokens", u.completionTokens());
    return usage;
  }

  static ObjectNode openAiUsage(Usage u) {
    ObjectNode usage = Json.object();
    usage.put("prompt_tokens", u.promptTokens());
    usage.put("completion_tokens", u.completionTokens());
    usage.put("total_tokens", u.promptTokens() + u.completionTokens());
    usage.putObject("prompt_tokens_details").put("cached_tokens", u.cachedPromptTokens());
    return usage;
  }

  static String anthropicId(String openAiId) {
    return openAiId.startsWith("msg_") ? openAiId : "msg_" + openAiId.replace("chatcmpl-", "");
  }

  static String openAiId(String anthropicId) {
    return anthropicId.startsWith("chatcmpl-") ? anthropicId : "chatcmpl-" + anthropicId.replace("msg_", "");
  }

  static ObjectNode openAiChatToAnthropic(ObjectNode in) {
    ObjectNode out = Json.object();
    out.put("id", anthropicId(in.path("id").asText("msg_gateway")));
    out.put("type", "message");
    out.put("role", "assistant");
    out.put("model", in.path("model").asText());
    ArrayNode content = out.putArray("content");
    JsonNode choice = in.path("choices").path(0);
    JsonNode message = choice.path("message");
    String reasoning = Json.text(message, "reasoning_content");
    if (reasoning == null) {
      reasoning = Json.text(message, "reasoning");
    }
    if (reasoning != null && !reasoning.isEmpty()) {
      content.addObject().put("type", "thinking").put("thinking", reasoning).put("signature", "");
    }
    String text = Json.text(message, "content");
    if (text == null && Json.present(message, "refusal")) {
      text = message.path("refusal").asText();
    }
    if (text != null && !text.isEmpty()) {
      content.addObject().put("type", "text").put("text", text);
    }
    for (JsonNode call : message.path("tool_calls")) {
      ObjectNode use = content.addObject();
      use.put("type", "tool_use");
      use.put("id", call.path("id").asText());
      use.put("name", call.path("function").path("name").asText());
      ObjectNode input = Json.parseObject(call.path("function").path("arguments").asText("{}"));
      use.set("input", input == null ? Json.object() : input);
    }
    String stopReason = anthropicStopReason(Json.text(choice, "finish_reason"), choice.get("stop_reason"));
    out.put("stop_reason", stopReason);
    if (stopReason.equals("stop_sequence")) {
      out.put("stop_sequence", choice.path("stop_reason").asText());
    } else {
      out.putNull("stop_sequence");
    }
    Usage u = Usages.fromOpenAi(in.get("usage"));
    out.set("usage", anthropicUsage(u == null ? Usage.UNKNOWN : u));
    return out;
  }

  static ObjectNode anthropicToOpenAiChat(ObjectNode in, long createdSeconds) {
    ObjectNode out = Json.object();
    out.put("id", openAiId(in.path("id").asText("msg_gateway")));
    out.put("object", "chat.completion");
    out.put("created", createdSeconds);
    out.put("model", in.path("model").asText());
    ArrayNode choices = out.putArray("choices");
    ObjectNode choice = choices.addObject();
    choice.put("index", 0);
    ObjectNode message = choice.putObject("message");
    message.put("role", "assistant");
    StringBuilder text = new StringBuilder();
    StringBuilder reasoning = new StringBuilder();
    ArrayNode calls = Json.array();
    for (JsonNode block : in.path("content")) {
      switch (block.path("type").asText()) {
        case "text" -> text.append(block.path("text").asText());
        case "thinking" -> reasoning.append(block.path("thinking").asText());
        case "tool_use" -> {
          ObjectNode call = calls.addObject();
          call.put("id", block.path("id").asText());
          call.put("type", "function");
          call.putObject("function").put("name", block.path("name").asText())
              .put("arguments", Json.write(block.has("input") ? block.get("input") : Json.object()));
        }
        default -> {
          // redacted thinking and server-tool blocks have no OpenAI form
        }
      }
    }
    if (text.length() > 0 || calls.isEmpty()) {
      message.put("content", text.toString());
    } else {
      message.putNull("content");
    }
    if (reasoning.length() > 0) {
      message.put("reasoning_content", reasoning.toString());
    }
    if (!calls.isEmpty()) {
      message.set("tool_calls", calls);
    }
    choice.putNull("logprobs");
    choice.put("finish_reason", openAiFinishReason(Json.text(in, "stop_reason")));
    Usage u = Usages.fromAnthropic(in.get("usage"));
    out.set("usage", openAiUsage(u == null ? Usage.UNKNOWN : u));
    return out;
  }
}
