package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Request bodies from one format to the other. Stateless. */
final class RequestTranslation {

  /** OpenAI chat fields with no Anthropic counterpart that only tune sampling or bookkeeping: dropped. */
  static final Set<String> OPENAI_DROPPED = Set.of("frequency_penalty", "presence_penalty", "seed", "logit_bias",
      "service_tier", "store", "metadata", "reasoning_effort", "stream_options", "prompt_cache_key",
      "safety_identifier", "verbosity", "cache_salt", "priority", "ignore_eos", "min_tokens",
      "repetition_penalty", "min_p", "skip_special_tokens");
  /** Anthropic fields with no OpenAI counterpart that only tune sampling or bookkeeping: dropped. */
  static final Set<String> ANTHROPIC_DROPPED = Set.of("top_k", "thinking", "service_tier", "container",
      "context_management", "mcp_servers", "cache_salt", "priority");

  private RequestTranslation() {}

  // ---- OpenAI chat -> Anthropic messages ----

  static ObjectNode openAiChatToAnthropic(ObjectNode in, String model, int defaultMaxTokens)
      throws UnsupportedTranslationException {
    ObjectNode out = Json.object();
    out.put("model", model);
    ArrayNode system = Json.array();
    ArrayNode messages = Json.array();
    for (Map.Entry<String, JsonNode> f : Json.presentFields(in)) {
      String name = f.getKey();
      JsonNode v = f.getValue();
      switch (name) {
        case "model", "messages", "max_tokens", "max_completion_tokens", "tool_choice", "parallel_tool_calls" -> {
          // handled below
        }
        case "stream" -> out.put("stream", v.asBoolean(false));
        case "temperature" -> out.put("temperature", Math.min(1.0, v.asDouble()));
        case "top_p" -> out.put("top_p", v.asDouble());
        case "top_k" -> out.put("top_k", v.asInt());
        case "stop" -> {
          ArrayNode seqs = Json.array();
          if (v.isTextual()) {
            seqs.add(v.asText());
          } else if (v.isArray()) {
            v.forEach(s -> seqs.add(s.asText()));
          }
          if (!seqs.isEmpty()) {
            out.set("stop_sequences", seqs);
          }
        }
        case "user" -> out.putObject("metadata").put("user_id", v.asText());
        case "n" -> {
          if (v.asInt(1) != 1) {
            throw unsupported("n", "several choices per request");
          }
        }
        case "logprobs" -> {
          if (v.asBoolean(false)) {
            throw unsupported("logprobs", "log probabilities");
          }
        }
        case "top_logprobs" -> throw unsupported("top_logprobs", "log probabilities");
        case "response_format" -> {
          if (!"text".equals(Json.text(v, "type"))) {
            throw unsupported("response_format", "a structured response format");
          }
        }
        case "modalities" -> {
          for (JsonNode m : v) {
            if (!"text".equals(m.asText())) {
              throw unsupported("modalities", "output modality " + m.asText());
            }
          }
        }
        case "audio", "prediction", "web_search_options", "functions", "function_call" ->
            throw unsupported(name, "not expressible in the Anthropic messages API");
        case "tools" -> out.set("tools", openAiToolsToAnthropic(v));
        default -> {
          if (!OPENAI_DROPPED.contains(name)) {
            throw unsupported(name, "unknown parameter");
          }
        }
      }
    }
    JsonNode max = in.get("max_completion_tokens");
    if (max == null || max.isNull()) {
      max = in.get("max_tokens");
    }
    out.put("max_tokens", max != null && max.canConvertToInt() ? max.intValue() : defaultMaxTokens);
    ObjectNode choice = openAiToolChoiceToAnthropic(in.get("tool_choice"), in.get("parallel_tool_calls"));
    if (choice != null) {
      out.set("tool_choice", choice);
    }
    openAiMessagesToAnthropic(in.get("messages"), system, messages);
    if (!system.isEmpty()) {
      out.set("system", system);
    }
    out.set("messages", messages);
    return out;
  }

  /**
   * The chat messages as Anthropic turns: system and developer ones into {@code system}, the rest into
   * {@code messages}.
   */
  private static void openAiMessagesToAnthropic(@Nullable JsonNode msgs, ArrayNode system, ArrayNode messages)
      throws UnsupportedTranslationException {
    if (msgs == null || !msgs.isArray()) {
      throw unsupported("messages", "missing");
    }
    for (int i = 0; i < msgs.size(); i++) {
      JsonNode m = msgs.get(i);
      String path = "messages[" + i + "]";
      String role = Json.text(m, "role");
      JsonNode content = m.get("content");
      switch (role == null ? "" : role) {
        case "system", "developer" -> textBlocks(content, path + ".content", system);
        case "user" -> {
          ArrayNode blocks = Json.array();
          userBlocks(content, path + ".content", blocks);
          append(messages, "user", blocks);
        }
        case "assistant" -> {
          ArrayNode blocks = Json.array();
          if (content != null && !content.isNull()) {
            textBlocks(content, path + ".content", blocks);
          }
          JsonNode calls = m.get("tool_calls");
          if (calls != null && calls.isArray()) {
            for (int c = 0; c < calls.size(); c++) {
              JsonNode call = calls.get(c);
              JsonNode fn = call.path("function");
              ObjectNode use = blocks.addObject();
              use.put("type", "tool_use");
              use.put("id", call.path("id").asText());
              use.put("name", fn.path("name").asText());
              use.set("input", arguments(fn.path("arguments"), path + ".tool_calls[" + c + "].function.arguments"));
            }
          }
          if (!blocks.isEmpty()) {
            append(messages, "assistant", blocks);
          }
        }
        case "tool" -> {
          ObjectNode result = Json.object();
          result.put("type", "tool_result");
          result.put("tool_use_id", m.path("tool_call_id").asText());
          ArrayNode inner = Json.array();
          textBlocks(content, path + ".content", inner);
          result.set("content", inner);
          ArrayNode blocks = Json.array();
          blocks.add(result);
          append(messages, "user", blocks);
        }
        default -> throw unsupported(path + ".role", "role '" + role + "'");
      }
    }
  }

  /** Appends blocks to the last message if it has the same role (Anthropic wants alternating turns). */
  private static void append(ArrayNode messages, String role, ArrayNode blocks) {
    if (!messages.isEmpty()) {
      JsonNode last = messages.get(messages.size() - 1);
      if (role.equals(Json.text(last, "role"))) {
        ArrayNode content = (ArrayNode) last.get("content");
        // Tool results must come first in a user turn.
        if (role.equals("user") && isToolResults(blocks)) {
          ArrayNode merged = Json.array();
          merged.addAll(blocks);
          merged.addAll(content);
          ((ObjectNode) last).set("content", merged);
        } else {
          content.addAll(blocks);
        }
        return;
      }
    }
    ObjectNode m = messages.addObject();
    m.put("role", role);
    m.set("content", blocks);
  }

  private static boolean isToolResults(ArrayNode blocks) {
    for (JsonNode b : blocks) {
      if (!"tool_result".equals(Json.text(b, "type"))) {
        return false;
      }
    }
    return true;
  }

  private static void textBlocks(@Nullable JsonNode content, String path, ArrayNode out)
      throws UnsupportedTranslationException {
    if (content == null || content.isNull()) {
      return;
    }
    if (content.isTextual()) {
      if (!content.asText().isEmpty()) {
        out.addObject().put("type", "text").put("text", content.asText());
      }
      return;
    }
    for (int i = 0; i < content.size(); i++) {
      JsonNode part = content.get(i);
      String type = Json.text(part, "type");
      String text = switch (type == null ? "" : type) {
        case "text", "input_text" -> part.path("text").asText();
        case "refusal" -> part.path("refusal").asText();
        default -> throw unsupported(path + "[" + i + "]", "content part '" + type + "' here");
      };
      if (!text.isEmpty()) {
        out.addObject().put("type", "text").put("text", text);
      }
    }
  }

  private static void userBlocks(@Nullable JsonNode content, String path, ArrayNode out)
      throws UnsupportedTranslationException {
    if (content == null || content.isNull()) {
      return;
    }
    if (content.isTextual()) {
      out.addObject().put("type", "text").put("text", content.asText());
      return;
    }
    for (int i = 0; i < content.size(); i++) {
      JsonNode part = content.get(i);
      String type = Json.text(part, "type");
      switch (type == null ? "" : type) {
        case "text", "input_text" -> out.addObject().put("type", "text").put("text", part.path("text").asText());
        case "image_url" -> {
          JsonNode img = part.get("image_url");
          String url = img != null && img.isTextual() ? img.asText() : img == null ? "" : img.path("url").asText();
          out.add(imageBlock(url));
        }
        default -> throw unsupported(path + "[" + i + "]", "content part '" + type + "'");
      }
    }
  }

  private static ObjectNode imageBlock(String url) {
    ObjectNode block = Json.object();
    block.put("type", "image");
    ObjectNode source = block.putObject("source");
    if (url.startsWith("data:")) {
      int semi = url.indexOf(';');
      int comma = url.indexOf(',');
      source.put("type", "base64");
      source.put("media_type", semi > 5 ? url.substring(5, semi) : "image/png");
      source.put("data", comma >= 0 ? url.substring(comma + 1) : "");
    } else {
      source.put("type", "url");
      source.put("url", url);
    }
    return block;
  }

  private static JsonNode arguments(JsonNode arguments, String path) throws UnsupportedTranslationException {
    if (arguments.isObject()) {
      return arguments;
    }
    String text = arguments.asText("");
    if (text.isBlank()) {
      return Json.object();
    }
    ObjectNode parsed = Json.parseObject(text);
    if (parsed == null) {
      throw unsupported(path, "tool arguments that are not a JSON object");
    }
    return parsed;
  }

  private static ArrayNode openAiToolsToAnthropic(JsonNode tools) throws UnsupportedTranslationException {
    ArrayNode out = Json.array();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      if (!"function".equals(Json.text(t, "type"))) {
        throw unsupported("tools[" + i + "].type", "tool type '" + Json.text(t, "type") + "'");
      }
      JsonNode fn = t.path("function");
      ObjectNode tool = out.addObject();
      tool.put("name", fn.path("name").asText());
      if (Json.present(fn, "description")) {
        tool.put("description", fn.path("description").asText());
      }
      JsonNode params = fn.get("parameters");
      tool.set("input_schema", params != null && params.isObject() ? params
          : Json.object().put("type", "object").set("properties", Json.object()));
    }
    return out;
  }

  private static @Nullable ObjectNode openAiToolChoiceToAnthropic(@Nullable JsonNode choice,
      @Nullable JsonNode parallel) {
    ObjectNode out = null;
    if (choice != null && !choice.isNull()) {
      out = Json.object();
      if (choice.isTextual()) {
        switch (choice.asText()) {
          case "none" -> out.put("type", "none");
          case "required" -> out.put("type", "any");
          default -> out.put("type", "auto");
        }
      } else {
        out.put("type", "tool");
        out.put("name", choice.path("function").path("name").asText());
      }
    }
    if (parallel != null && parallel.isBoolean() && !parallel.booleanValue()) {
      if (out == null) {
        out = Json.object().put("type", "auto");
      }
      if (!"none".equals(Json.text(out, "type"))) {
        out.put("disable_parallel_tool_use", true);
      }
    }
    return out;
  }

  // ---- Anthropic messages -> OpenAI chat ----

  static ObjectNode anthropicToOpenAiChat(ObjectNode in, String model) throws UnsupportedTranslationException {
    ObjectNode out = Json.object();
    out.put("model", model);
    ArrayNode messages = out.putArray("messages");
    JsonNode system = in.get("system");
    if (system != null && !system.isNull()) {
      String text = joinText(system, "system");
      if (!text.isEmpty()) {
        messages.addObject().put("role", "system").put("content", text);
      }
    }
    boolean stream = false;
    for (Map.Entry<String, JsonNode> f : Json.presentFields(in)) {
      String name = f.getKey();
      JsonNode v = f.getValue();
      switch (name) {
        case "model", "messages", "system", "tool_choice" -> {
          // handled elsewhere
        }
        case "max_tokens" -> out.put("max_tokens", v.asInt());
        case "stream" -> stream = v.asBoolean(false);
        case "temperature" -> out.put("temperature", v.asDouble());
        case "top_p" -> out.put("top_p", v.asDouble());
        case "stop_sequences" -> {
          if (!v.isEmpty()) {
            out.set("stop", v);
          }
        }
        case "metadata" -> {
          if (Json.present(v, "user_id")) {
            out.put("user", v.path("user_id").asText());
          }
        }
        case "tools" -> out.set("tools", anthropicToolsToOpenAi(v));
        default -> {
          if (!ANTHROPIC_DROPPED.contains(name)) {
            throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, name, "unknown parameter");
          }
        }
      }
    }
    if (stream) {
      ChatRequestParts.streamWithUsage(out);
    }
    JsonNode choice = in.get("tool_choice");
    if (choice != null && choice.isObject()) {
      switch (choice.path("type").asText()) {
        case "none" -> out.put("tool_choice", "none");
        case "any" -> out.put("tool_choice", "required");
        case "tool" -> out.putObject("tool_choice").put("type", "function").putObject("function")
            .put("name", choice.path("name").asText());
        default -> out.put("tool_choice", "auto");
      }
      if (choice.path("disable_parallel_tool_use").asBoolean(false)) {
        out.put("parallel_tool_calls", false);
      }
    }
    anthropicMessagesToOpenAi(in.get("messages"), messages);
    return out;
  }

  /** The Anthropic turns as chat messages (a turn's tool results become tool messages). */
  private static void anthropicMessagesToOpenAi(@Nullable JsonNode msgs, ArrayNode messages)
      throws UnsupportedTranslationException {
    if (msgs == null || !msgs.isArray()) {
      throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, "messages", "missing");
    }
    for (int i = 0; i < msgs.size(); i++) {
      JsonNode m = msgs.get(i);
      String path = "messages[" + i + "]";
      String role = m.path("role").asText();
      JsonNode content = m.get("content");
      if (content == null || content.isNull()) {
        continue;
      }
      if (content.isTextual()) {
        messages.addObject().put("role", role).put("content", content.asText());
        continue;
      }
      if (role.equals("assistant")) {
        messages.add(assistantToOpenAi(content, path));
        continue;
      }
      ArrayNode parts = Json.array();
      for (int b = 0; b < content.size(); b++) {
        JsonNode block = content.get(b);
        String bpath = path + ".content[" + b + "]";
        switch (block.path("type").asText()) {
          case "text" -> parts.addObject().put("type", "text").put("text", block.path("text").asText());
          case "image" -> parts.addObject().put("type", "image_url").putObject("image_url")
              .put("url", imageUrl(block.path("source"), bpath));
          case "tool_result" -> {
            String text = block.has("content") ? joinText(block.get("content"), bpath + ".content") : "";
            if (block.path("is_error").asBoolean(false)) {
              text = "Error: " + text;
            }
            messages.addObject().put("role", "tool").put("tool_call_id", block.path("tool_use_id").asText())
                .put("content", text);
          }
          default -> throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, bpath,
              "content block '" + block.path("type").asText() + "'");
        }
      }
      if (!parts.isEmpty()) {
        ObjectNode msg = messages.addObject();
        msg.put("role", role);
        if (parts.size() == 1 && "text".equals(Json.text(parts.get(0), "type"))) {
          msg.put("content", parts.get(0).path("text").asText());
        } else {
          msg.set("content", parts);
        }
      }
    }
  }

  /** An assistant turn's blocks as one chat message: its text joined, its tool uses as tool calls. */
  private static ObjectNode assistantToOpenAi(JsonNode content, String path) throws UnsupportedTranslationException {
    StringBuilder text = new StringBuilder();
    ArrayNode calls = Json.array();
    for (int b = 0; b < content.size(); b++) {
      JsonNode block = content.get(b);
      switch (block.path("type").asText()) {
        case "text" -> text.append(block.path("text").asText());
        case "tool_use" -> {
          ObjectNode call = calls.addObject();
          call.put("id", block.path("id").asText());
          call.put("type", "function");
          ObjectNode fn = call.putObject("function");
          fn.put("name", block.path("name").asText());
          fn.put("arguments", Json.write(block.has("input") ? block.get("input") : Json.object()));
        }
        case "thinking", "redacted_thinking" -> {
          // the other format cannot carry reasoning back to the model
        }
        default -> throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT,
            path + ".content[" + b + "]", "assistant block '" + block.path("type").asText() + "'");
      }
    }
    ObjectNode msg = Json.object();
    msg.put("role", "assistant");
    if (text.length() > 0) {
      msg.put("content", text.toString());
    } else {
      msg.putNull("content");
    }
    if (!calls.isEmpty()) {
      msg.set("tool_calls", calls);
    }
    return msg;
  }

  private static String joinText(JsonNode content, String path) throws UnsupportedTranslationException {
    if (content.isTextual()) {
      return content.asText();
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < content.size(); i++) {
      JsonNode block = content.get(i);
      if (!"text".equals(Json.text(block, "type"))) {
        throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, path + "[" + i + "]",
            "block '" + Json.text(block, "type") + "' here");
      }
      if (sb.length() > 0) {
        sb.append("\n\n");
      }
      sb.append(block.path("text").asText());
    }
    return sb.toString();
  }

  private static String imageUrl(JsonNode source, String path) throws UnsupportedTranslationException {
    return switch (source.path("type").asText()) {
      case "url" -> source.path("url").asText();
      case "base64" -> "data:" + source.path("media_type").asText("image/png") + ";base64,"
          + source.path("data").asText();
      default -> throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, path + ".source",
          "image source '" + source.path("type").asText() + "'");
    };
  }

  private static ArrayNode anthropicToolsToOpenAi(JsonNode tools) throws UnsupportedTranslationException {
    ArrayNode out = Json.array();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      String type = Json.text(t, "type");
      if (type != null && !type.equals("custom")) {
        throw unsupported(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, "tools[" + i + "].type",
            "server tool '" + type + "'");
      }
      ChatRequestParts.addFunctionTool(out, t, t.has("input_schema") ? t.get("input_schema") : Json.object());
    }
    return out;
  }

  private static UnsupportedTranslationException unsupported(String field, String what) {
    return unsupported(ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, field, what);
  }

  private static UnsupportedTranslationException unsupported(ApiFormat from, ApiFormat to, String field,
      String what) {
    return new UnsupportedTranslationException(from, to, field, what);
  }
}
