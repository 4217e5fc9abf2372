package dev.kinference.vllm.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A chat request as vLLM hands it to the chat template (vllm/entrypoints/chat_utils.py): OpenAI-format messages
 * whose content is a string (text parts joined by newlines), tool-call arguments parsed from their JSON text, tools
 * in OpenAI's function format, plus the request's {@code chat_template_kwargs}, {@code add_generation_prompt} and
 * {@code continue_final_message}. Anthropic requests are converted as vLLM's {@code /v1/messages} does.
 *
 * @param messages the conversation (an array of message objects)
 * @param tools the tool definitions, or null when the request has none
 * @param templateKwargs extra template variables ({@code chat_template_kwargs}), possibly empty
 */
record ChatRequests(ArrayNode messages, @Nullable ArrayNode tools, ObjectNode templateKwargs,
    boolean addGenerationPrompt, boolean continueFinalMessage) {

  static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** The chat view of {@code request}, which must have messages. */
  static ChatRequests of(InferenceRequest request) throws TokenizationException {
    ObjectNode body = request.body();
    ObjectNode kwargs = NODES.objectNode();
    boolean addGenerationPrompt = true;
    boolean continueFinal = false;
    ArrayNode messages;
    if (body != null && request.format() == ApiFormat.OPENAI_CHAT && body.path("messages").isArray()) {
      messages = NODES.arrayNode();
      for (JsonNode m : body.get("messages")) {
        messages.add(openAiMessage(m));
      }
      JsonNode k = body.get("chat_template_kwargs");
      if (k != null && k.isObject()) {
        kwargs.setAll((ObjectNode) k);
      }
      addGenerationPrompt = body.path("add_generation_prompt").asBoolean(true);
      continueFinal = body.path("continue_final_message").asBoolean(false);
      if (continueFinal) {
        addGenerationPrompt = false;
      }
    } else {
      messages = fromMessages(request.messages());
    }
    ArrayNode tools = null;
    if (!request.toolsJson().isEmpty()) {
      tools = NODES.arrayNode();
      for (String t : request.toolsJson()) {
        tools.add(tool(parse(t, "tool definition"), request.format()));
      }
    }
    return new ChatRequests(messages, tools, kwargs, addGenerationPrompt, continueFinal);
  }

  /** An OpenAI message, normalised: string content, parsed tool-call arguments. */
  private static ObjectNode openAiMessage(JsonNode m) throws TokenizationException {
    if (!m.isObject()) {
      throw new TokenizationException("a message is not an object");
    }
    ObjectNode out = ((ObjectNode) m).deepCopy();
    JsonNode content = m.get("content");
    if (content == null || content.isNull()) {
      out.put("content", "");
    } else if (content.isArray()) {
      List<String> texts = new ArrayList<>();
      for (JsonNode part : content) {
        String type = part.path("type").asText("text");
        if (part.isTextual()) {
          texts.add(part.asText());
        } else if (type.equals("text") || type.equals("input_text") || type.equals("output_text")) {
          texts.add(part.path("text").asText(""));
        } else if (type.equals("refusal")) {
          texts.add(part.path("refusal").asText(""));
        } else {
          throw new TokenizationException("content part of type '" + type
              + "' (multimodal) cannot be tokenized without the server");
        }
      }
      out.put("content", String.join("\n", texts));
    } else if (!content.isTextual()) {
      throw new TokenizationException("message content must be a string or an array of parts");
    }
    JsonNode calls = out.get("tool_calls");
    if (calls != null && calls.isArray()) {
      for (JsonNode call : calls) {
        JsonNode fn = call.get("function");
        if (fn instanceof ObjectNode f && f.path("arguments").isTextual()) {
          f.set("arguments", parse(f.get("arguments").asText(), "tool-call arguments"));
        }
      }
    }
    return out;
  }

  /** Messages built from the normalised conversation (Anthropic requests, programmatic ones). */
  private static ArrayNode fromMessages(List<Message> conversation) throws TokenizationException {
    ArrayNode out = NODES.arrayNode();
    for (Message m : conversation) {
      List<String> texts = new ArrayList<>();
      ArrayNode calls = NODES.arrayNode();
      for (ContentPart p : m.content()) {
        switch (p) {
          case ContentPart.Text t -> texts.add(t.text());
          case ContentPart.ToolUse u -> {
            ObjectNode call = NODES.objectNode().put("id", u.id()).put("type", "function");
            call.putObject("function").put("name", u.name()).set("arguments", parse(u.inputJson(), "tool input"));
            calls.add(call);
          }
          case ContentPart.ToolResult r -> {
            flushText(out, m.role(), texts);
            out.addObject().put("role", "tool").put("tool_call_id", r.toolUseId()).put("content", text(r.content()));
          }
          case ContentPart.Image i -> throw new TokenizationException(
              "an image cannot be tokenized without the server (multimodal placeholders are model-specific)");
          case ContentPart.Other o -> throw new TokenizationException(
              "content part of type '" + o.type() + "' cannot be tokenized without the server");
        }
      }
      if (m.role().equals("tool")) {
        continue; // its results were emitted above
      }
      if (!texts.isEmpty() || !calls.isEmpty() || m.content().isEmpty()) {
        ObjectNode msg = out.addObject().put("role", m.role()).put("content", String.join("\n", texts));
        if (!calls.isEmpty()) {
          msg.set("tool_calls", calls);
        }
      }
    }
    return out;
  }

  private static void flushText(ArrayNode out, String role, List<String> texts) {
    if (!texts.isEmpty() && !role.equals("tool")) {
      out.addObject().put("role", role).put("content", String.join("\n", texts));
      texts.clear();
    }
  }

  private static String text(List<ContentPart> parts) throws TokenizationException {
    List<String> texts = new ArrayList<>();
    for (ContentPart p : parts) {
      if (p instanceof ContentPart.Text t) {
        texts.add(t.text());
      } else {
        throw new TokenizationException("a tool result with non-text content cannot be tokenized without the server");
      }
    }
    return String.join("\n", texts);
  }

  /**
   * OpenAI's tool format; Anthropic's {name, description, input_schema} and the Responses API's flat
   * {type: function, name, description, parameters} converted as vLLM does.
   */
  private static JsonNode tool(JsonNode t, ApiFormat format) {
    if (format == ApiFormat.OPENAI_RESPONSES && "function".equals(t.path("type").asText()) && !t.has("function")) {
      ObjectNode out = NODES.objectNode().put("type", "function");
      ObjectNode fn = out.putObject("function").put("name", t.path("name").asText());
      if (t.has("description")) {
        fn.set("description", t.get("description"));
      }
      fn.set("parameters", t.has("parameters") ? t.get("parameters") : NODES.objectNode());
      return out;
    }
    if (format == ApiFormat.ANTHROPIC_MESSAGES && t.has("input_schema") && !t.has("function")) {
      ObjectNode out = NODES.objectNode().put("type", "function");
      ObjectNode fn = out.putObject("function").put("name", t.path("name").asText());
      if (t.has("description")) {
        fn.set("description", t.get("description"));
      }
      fn.set("parameters", t.get("input_schema"));
      return out;
    }
    return t;
  }

  private static JsonNode parse(String json, String what) throws TokenizationException {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new TokenizationException(what + " is not valid JSON: " + e.getMessage(), e);
    }
  }

  /** The body of vLLM's {@code POST /tokenize} (or render) for this conversation. */
  ObjectNode toRequestBody(String model) {
    ObjectNode body = NODES.objectNode().put("model", model);
    body.set("messages", messages);
    if (tools != null) {
      body.set("tools", tools);
    }
    body.put("add_generation_prompt", addGenerationPrompt);
    if (continueFinalMessage) {
      body.put("continue_final_message", true);
    }
    if (!templateKwargs.isEmpty()) {
      body.set("chat_template_kwargs", templateKwargs);
    }
    return body;
  }
}
