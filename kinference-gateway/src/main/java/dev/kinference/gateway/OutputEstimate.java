package dev.kinference.gateway;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Output tokens of a complete response that reported no usage, estimated from its text at four characters a token
 * (the usual figure for English with BPE tokenizers), so that such a response is charged for its output rather than
 * for none. Stateless.
 */
final class OutputEstimate {

  private static final int CHARS_PER_TOKEN = 4;

  private OutputEstimate() {}

  /** The estimate for an OpenAI chat, completions or Responses API response, or an Anthropic message. */
  static int ofResponse(JsonNode response) {
    long chars = 0;
    for (JsonNode choice : response.path("choices")) {
      chars += text(choice.path("text"));
      JsonNode message = choice.path("message");
      chars += text(message.path("content")) + text(message.path("reasoning_content"));
      for (JsonNode call : message.path("tool_calls")) {
        chars += text(call.path("function").path("arguments")) + text(call.path("function").path("name"));
      }
    }
    for (JsonNode item : response.path("output")) { // a Responses API response
      chars += text(item.path("arguments"));
      for (JsonNode part : item.path("content")) {
        chars += text(part.path("text")) + text(part.path("refusal"));
      }
    }
    for (JsonNode block : response.path("content")) {
      chars += text(block.path("text")) + text(block.path("thinking")) + block.path("input").toString().length();
    }
    return (int) Math.min(Integer.MAX_VALUE, (chars + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN);
  }

  private static long text(JsonNode node) {
    return node.isTextual() ? node.asText().length() : 0;
  }
}
