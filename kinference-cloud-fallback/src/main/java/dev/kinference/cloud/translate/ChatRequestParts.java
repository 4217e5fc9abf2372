package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Parts of a Chat Completions request body that the translations into one write alike: from Anthropic messages
 * ({@link RequestTranslation}) and from the Responses API ({@link ResponsesTranslation}). Stateless.
 */
final class ChatRequestParts {

  private ChatRequestParts() {}

  /** A streamed request, asking for usage in the last chunk: the gateway charges it. */
  static void streamWithUsage(ObjectNode out) {
    out.put("stream", true);
    out.putObject("stream_options").put("include_usage", true);
  }

  /**
   * Appends a function tool named and described as {@code tool} is, with {@code parameters} as its JSON schema;
   * returns its {@code function} object for the fields only one source format has.
   */
  static ObjectNode addFunctionTool(ArrayNode tools, JsonNode tool, JsonNode parameters) {
    ObjectNode fn = tools.addObject().put("type", "function").putObject("function");
    fn.put("name", tool.path("name").asText());
    if (Json.present(tool, "description")) {
      fn.put("description", tool.path("description").asText());
    }
    fn.set("parameters", parameters);
    return fn;
  }
}
