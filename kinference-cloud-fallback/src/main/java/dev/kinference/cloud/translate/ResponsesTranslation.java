package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import dev.kinference.routing.Usage;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The OpenAI Responses API to and from Chat Completions, complete bodies. A Responses request for an Anthropic
 * provider goes through Chat Completions ({@link RequestTranslation} takes it on from there), so the fields refused
 * are named as the client sent them, in Responses terms. Stateless.
 */
final class ResponsesTranslation {

  /** Responses fields that only tune sampling or bookkeeping and have no Chat Completions counterpart: dropped. */
  static final Set<String> DROPPED = Set.of("store", "metadata", "truncation", "include", "service_tier",
      "cache_salt", "priority", "stream_options", "max_tool_calls");
  /** Fields Chat Completions takes as they are. */
  private static final Set<String> SAME = Set.of("temperature", "top_p", "parallel_tool_calls", "user",
      "safety_identifier", "prompt_cache_key", "top_k", "min_p", "repetition_penalty", "frequency_penalty",
      "presence_penalty", "seed", "stop");

  private ResponsesTranslation() {}

  // ---- requests ----

  /**
   * A Chat Completions body for a Responses request.
   *
   * @param target the format the chat body goes on to (an Anthropic provider expresses less: a structured text
   *     format is refused here, named as the client sent it)
   */
  static ObjectNode requestToChat(ObjectNode in, String model, ApiFormat target)
      throws UnsupportedTranslationException {
    ObjectNode out = Json.object();
    out.put("model", model);
    ArrayNode messages = Json.array();
    for (Map.Entry<String, JsonNode> f : Json.presentFields(in)) {
      String name = f.getKey();
      JsonNode v = f.getValue();
      switch (name) {
        case "model", "input", "instructions" -> {
          // handled below
        }
        case "stream" -> {
          if (v.asBoolean(false)) {
            ChatRequestParts.streamWithUsage(out);
          }
        }
        case "max_output_tokens" -> out.put("max_completion_tokens", v.asInt());
        case "previous_response_id" -> throw unsupported(target, name,
            "the provider does not hold the conversation this id names; send the whole conversation in input");
        case "conversation" -> throw unsupported(target, name, "stored conversations");
        case "prompt" -> throw unsupported(target, name, "stored prompt templates");
        case "background" -> {
          if (v.asBoolean(false)) {
            throw unsupported(target, name, "background responses");
          }
        }
        case "top_logprobs" -> throw unsupported(target, name, "log probabilities");
        case "reasoning" -> {
          if (v.hasNonNull("effort") && target == ApiFormat.OPENAI_CHAT) {
            out.put("reasoning_effort", v.get("effort").asText());
          }
        }
        case "text" -> textFormat(v, target, out);
        case "tools" -> out.set("tools", tools(v, target));
        case "tool_choice" -> out.set("tool_choice", toolChoice(v, target));
        default -> {
          if (SAME.contains(name)) {
            out.set(name, v);
          } else if (!DROPPED.contains(name)) {
            throw unsupported(target, name, "unknown parameter");
          }
        }
      }
    }
    JsonNode instructions = in.get("instructions");
    if (instructions != null && instructions.isTextual()) {
      messages.addObject().put("role", "system").put("content", instructions.asText());
    }
    JsonNode input = in.get("input");
    if (input != null && input.isTextual()) {
      messages.addObject().put("role", "user").put("content", input.asText());
    } else if (input != null && input.isArray()) {
      for (int i = 0; i < input.size(); i++) {
        item(input.get(i), "input[" + i + "]", target, messages);
      }
    } else {
      throw unsupported(target, "input", "missing");
    }
    out.set("messages", messages);
    return out;
  }

  private static void item(JsonNode item, String path, ApiFormat target, ArrayNode messages)
      throws UnsupportedTranslationException {
    String type = Json.text(item, "type");
    switch (type == null ? "message" : type) {
      case "message" -> {
        String role = item.path("role").asText();
        JsonNode content = item.get("content");
        ObjectNode m = Json.object().put("role", role);
        if (content != null && content.isTextual()) {
          m.put("content", content.asText());
        } else if (content != null && content.isArray()) {
          m.set("content", parts(content, path + ".content", role, target));
        } else {
          throw unsupported(target, path + ".content", "missing");
        }
        messages.add(m);
      }
      case "function_call" -> {
        ObjectNode call = Json.object().put("id", item.path("call_id").asText()).put("type", "function");
        call.putObject("function").put("name", item.path("name").asText())
            .put("arguments", item.path("arguments").asText(""));
        JsonNode last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
        ObjectNode assistant;
        if (last instanceof ObjectNode o && "assistant".equals(Json.text(o, "role"))) {
          assistant = o;
        } else {
          assistant = messages.addObject().put("role", "assistant");
          assistant.putNull("content");
        }
        JsonNode calls = assistant.get("tool_calls");
        (calls instanceof ArrayNode a ? a : assistant.putArray("tool_calls")).add(call);
      }
      case "function_call_output" -> {
        JsonNode output = item.path("output");
        String text = output.isTextual() ? output.asText() : joinText(output, path + ".output", target);
        messages.addObject().put("role", "tool").put("tool_call_id", item.path("call_id").asText())
            .put("content", text);
      }
      case "reasoning" -> {
        // the other format cannot carry reasoning back to the model (as for Anthropic thinking blocks)
      }
      default -> throw unsupported(target, path + ".type", "input item '" + type + "'");
    }
  }

  /** Content parts; an assistant's become one text (Chat Completions takes only text there). */
  private static JsonNode parts(JsonNode content, String path, String role, ApiFormat target)
      throws UnsupportedTranslationException {
    if (role.equals("assistant") || role.equals("system") || role.equals("developer")) {
      return Json.NODES.textNode(joinText(content, path, target));
    }
    ArrayNode out = Json.array();
    for (int i = 0; i < content.size(); i++) {
      JsonNode part = content.get(i);
      String type = part.path("type").asText();
      switch (type) {
        case "input_text", "output_text" -> out.addObject().put("type", "text").put("text", part.path("text").asText());
        case "input_image" -> {
          if (!part.hasNonNull("image_url")) {
            throw unsupported(target, path + "[" + i + "].file_id", "images by file id (uploaded files)");
          }
          ObjectNode url = out.addObject().put("type", "image_url").putObject("image_url")
              .put("url", part.get("image_url").asText());
          if (part.hasNonNull("detail") && target == ApiFormat.OPENAI_CHAT) {
            url.put("detail", part.get("detail").asText());
          }
        }
        default -> throw unsupported(target, path + "[" + i + "]", "content part '" + type + "'");
      }
    }
    return out;
  }

  private static String joinText(JsonNode content, String path, ApiFormat target)
      throws UnsupportedTranslationException {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < content.size(); i++) {
      JsonNode part = content.get(i);
      String type = part.path("type").asText();
      switch (type) {
        case "input_text", "output_text", "text" -> sb.append(part.path("text").asText());
        case "refusal" -> sb.append(part.path("refusal").asText());
        default -> throw unsupported(target, path + "[" + i + "]", "content part '" + type + "' here");
      }
    }
    return sb.toString();
  }

  private static void textFormat(JsonNode text, ApiFormat target, ObjectNode out)
      throws UnsupportedTranslationException {
    JsonNode format = text.path("format");
    String type = format.path("type").asText("text");
    switch (type) {
      case "text" -> {
        // the default
      }
      case "json_schema", "json_object" -> {
        if (target != ApiFormat.OPENAI_CHAT) {
          throw unsupported(target, "text.format", "a structured response format");
        }
        ObjectNode rf = out.putObject("response_format").put("type", type);
        if (type.equals("json_schema")) {
          ObjectNode schema = rf.putObject("json_schema");
          schema.put("name", format.path("name").asText("response"));
          if (format.has("schema")) {
            schema.set("schema", format.get("schema"));
          }
          if (format.has("strict")) {
            schema.set("strict", format.get("strict"));
          }
        }
      }
      default -> throw unsupported(target, "text.format.type", "format '" + type + "'");
    }
    if (text.hasNonNull("verbosity") && target == ApiFormat.OPENAI_CHAT) {
      out.set("verbosity", text.get("verbosity"));
    }
  }

  private static ArrayNode tools(JsonNode tools, ApiFormat target) throws UnsupportedTranslationException {
    ArrayNode out = Json.array();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      String type = Json.text(t, "type");
      if (!"function".equals(type)) {
        throw unsupported(target, "tools[" + i + "].type", "built-in tool '" + type + "'");
      }
      ObjectNode fn = ChatRequestParts.addFunctionTool(out, t,
          t.has("parameters") && t.get("parameters").isObject() ? t.get("parameters")
              : Json.object().put("type", "object"));
      if (Json.present(t, "strict") && target == ApiFormat.OPENAI_CHAT) {
        fn.set("strict", t.get("strict"));
      }
    }
    return out;
  }

  private static JsonNode toolChoice(JsonNode choice, ApiFormat target) throws UnsupportedTranslationException {
    if (choice.isTextual()) {
      return choice;
    }
    if ("function".equals(Json.text(choice, "type"))) {
      ObjectNode out = Json.object().put("type", "function");
      out.putObject("function").put("name", choice.path("name").asText());
      return out;
    }
    throw unsupported(target, "tool_choice", "tool choice '" + Json.text(choice, "type") + "'");
  }

  private static UnsupportedTranslationException unsupported(ApiFormat target, String field, String what) {
    return new UnsupportedTranslationException(ApiFormat.OPENAI_RESPONSES, target, field, what);
  }

  // ---- responses ----

  /** A Responses {@code response} object for a complete Chat Completions response. */
  static ObjectNode responseFromChat(ObjectNode in) {
    String base = in.path("id").asText("gateway").replace("chatcmpl-", "");
    JsonNode choice = in.path("choices").path(0);
    JsonNode message = choice.path("message");
    ArrayNode output = Json.array();
    String text = Json.text(message, "content");
    if (text == null && Json.present(message, "refusal")) {
      text = message.path("refusal").asText();
    }
    if (text != null && !text.isEmpty()) {
      output.add(messageItem("msg_" + base, text, "completed"));
    }
    int i = 0;
    for (JsonNode call : message.path("tool_calls")) {
      output.add(functionCallItem("fc_" + base + "_" + i++, call.path("id").asText(),
          call.path("function").path("name").asText(), call.path("function").path("arguments").asText("{}"),
          "completed"));
    }
    Usage u = Usages.fromOpenAi(in.get("usage"));
    return response("resp_" + base, in.path("created").asLong(System.currentTimeMillis() / 1000),
        in.path("model").asText(), Json.text(choice, "finish_reason"), output, u == null ? Usage.UNKNOWN : u);
  }

  /** A {@code response} object; {@code output} null for one in progress (no output, no usage yet). */
  static ObjectNode response(String id, long created, String model, @Nullable String finishReason,
      @Nullable ArrayNode output, Usage usage) {
    ObjectNode r = Json.object();
    r.put("id", id).put("object", "response").put("created_at", created).put("model", model);
    String incomplete = output == null ? null : "length".equals(finishReason) ? "max_output_tokens"
        : "content_filter".equals(finishReason) ? "content_filter" : null;
    r.put("status", output == null ? "in_progress" : incomplete != null ? "incomplete" : "completed");
    if (incomplete != null) {
      r.putObject("incomplete_details").put("reason", incomplete);
    } else {
      r.putNull("incomplete_details");
    }
    r.putNull("error");
    r.putNull("instructions");
    r.putNull("metadata");
    r.set("output", output == null ? Json.array() : output);
    r.put("parallel_tool_calls", true);
    r.putNull("temperature");
    r.put("tool_choice", "auto");
    r.putArray("tools");
    r.putNull("top_p");
    r.put("store", false);
    if (output == null) {
      r.putNull("usage");
    } else {
      r.set("usage", usage(usage));
    }
    return r;
  }

  static ObjectNode usage(Usage u) {
    ObjectNode usage = Json.object();
    usage.put("input_tokens", u.promptTokens());
    usage.putObject("input_tokens_details").put("cached_tokens", u.cachedPromptTokens());
    usage.put("output_tokens", u.completionTokens());
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    usage.put("total_tokens", u.promptTokens() + u.completionTokens());
    return usage;
  }

  static ObjectNode messageItem(String id, @Nullable String text, String status) {
    ObjectNode item = Json.object().put("id", id).put("type", "message").put("role", "assistant")
        .put("status", status);
    ArrayNode content = item.putArray("content");
    if (text != null) {
      content.add(outputText(text));
    }
    return item;
  }

  static ObjectNode outputText(String text) {
    ObjectNode part = Json.object().put("type", "output_text").put("text", text);
    part.putArray("annotations");
    return part;
  }

  static ObjectNode functionCallItem(String id, String callId, String name, String arguments, String status) {
    return Json.object().put("id", id).put("type", "function_call").put("call_id", callId).put("name", name)
        .put("arguments", arguments).put("status", status);
  }
}
