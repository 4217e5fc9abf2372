package dev.kinference.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The OpenAI Responses API's request body ({@code POST /v1/responses}) as an {@link InferenceRequest}:
 * {@code instructions} become a system message; {@code input} (a string, or a list of items) becomes the
 * conversation: {@code message} items (roles user, system, developer, assistant; text, images and files),
 * {@code function_call} items (assistant tool calls), {@code function_call_output} items (tool results), and
 * {@code reasoning} and other items kept uninterpreted in the assistant's turn. {@code max_output_tokens} is the
 * output budget; {@code previous_response_id} is a session hint (see {@link RequestParser}). The conversation a
 * {@code previous_response_id} names is held by the server that answered it, so it is not part of this request's
 * messages. Stateless.
 */
final class ResponsesParser {

  private ResponsesParser() {}

  static InferenceRequest parse(RequestParser parser, ObjectNode root) throws InvalidRequestException {
    InferenceRequest.Builder b = parser.common(root, ApiFormat.OPENAI_RESPONSES);
    JsonNode previous = root.get("previous_response_id");
    if (previous != null && !previous.isNull() && (!previous.isTextual() || previous.asText().isBlank())) {
      throw new MalformedRequestException("previous_response_id", "must be a non-empty string");
    }
    JsonNode store = root.get("store");
    if (store != null && !store.isNull() && !store.isBoolean()) {
      throw new MalformedRequestException("store", "must be a boolean");
    }
    List<Message> messages = new ArrayList<>();
    JsonNode instructions = root.get("instructions");
    if (instructions != null && !instructions.isNull()) {
      if (!instructions.isTextual()) {
        throw new MalformedRequestException("instructions", "must be a string");
      }
      messages.add(Message.text("system", instructions.asText()));
    }
    JsonNode input = root.get("input");
    if (input == null || input.isNull()) {
      throw new MalformedRequestException("input", "is required");
    }
    if (input.isTextual()) {
      messages.add(Message.text("user", input.asText()));
    } else if (input.isArray()) {
      parser.checkMessageCount(input);
      for (int i = 0; i < input.size(); i++) {
        item(input.get(i), "input[" + i + "]", messages);
      }
    } else {
      throw new MalformedRequestException("input", "must be a string or an array of input items");
    }
    if (messages.isEmpty()) {
      throw new MalformedRequestException("input", "must contain at least one item");
    }
    b.messages(messages);
    Integer maxTokens = RequestParser.optionalPositiveInt(root, "max_output_tokens");
    if (maxTokens != null) {
      b.maxTokens(maxTokens);
    }
    RequestParser.tools(root, b);
    return b.build();
  }

  private static void item(JsonNode node, String path, List<Message> out)
      throws InvalidRequestException {
    if (!node.isObject()) {
      throw new MalformedRequestException(path, "must be an object");
    }
    JsonNode typeNode = node.get("type");
    String type = typeNode == null || typeNode.isNull() ? "message"
        : RequestParser.requireString(node, "type", path);
    switch (type) {
      case "message" -> {
        String role = RequestParser.requireString(node, "role", path);
        String normalized = switch (role) {
          case "user", "assistant", "system" -> role;
          case "developer" -> "system";
          default -> throw new MalformedRequestException(path + ".role",
              "unknown role '" + role + "' (expected user, assistant, system or developer)");
        };
        JsonNode content = node.get("content");
        if (content == null || content.isNull()) {
          throw new MalformedRequestException(path + ".content", "is required");
        }
        List<ContentPart> parts = new ArrayList<>();
        content(content, path + ".content", parts);
        append(out, normalized, parts);
      }
      case "function_call" -> {
        JsonNode args = node.get("arguments");
        String argsText = args == null || args.isNull() ? "" : args.isTextual() ? args.asText() : args.toString();
        append(out, "assistant", List.of(new ContentPart.ToolUse(
            RequestParser.requireString(node, "call_id", path),
            RequestParser.requireString(node, "name", path), argsText)));
      }
      case "function_call_output" -> {
        String callId = RequestParser.requireString(node, "call_id", path);
        JsonNode output = node.get("output");
        if (output == null || output.isNull()) {
          throw new MalformedRequestException(path + ".output", "is required");
        }
        List<ContentPart> inner = new ArrayList<>();
        content(output, path + ".output", inner);
        out.add(new Message("tool", List.of(new ContentPart.ToolResult(callId, inner, false))));
      }
      // Reasoning, item references and built-in tools' calls: kept as they came, in the assistant's turn.
      default -> append(out, "assistant", List.of(new ContentPart.Other(type, node.toString())));
    }
  }

  /** Adds parts to the last message when it has the same role (an assistant turn with text and calls is one). */
  private static void append(List<Message> out, String role, List<ContentPart> parts) {
    if (role.equals("assistant") && !out.isEmpty() && out.getLast().role().equals("assistant")) {
      List<ContentPart> merged = new ArrayList<>(out.getLast().content());
      merged.addAll(parts);
      out.set(out.size() - 1, new Message(role, merged));
    } else {
      out.add(new Message(role, parts));
    }
  }

  private static void content(JsonNode content, String path, List<ContentPart> out) throws InvalidRequestException {
    RequestParser.contentParts(content, path, out, (type, part, partPath) -> switch (type) {
      case "input_text", "output_text", "text" -> new ContentPart.Text(RequestParser.requireString(part, "text",
          partPath));
      case "refusal" -> new ContentPart.Text(RequestParser.requireString(part, "refusal", partPath));
      case "input_image" -> {
        JsonNode url = part.get("image_url");
        JsonNode file = part.get("file_id");
        if (url != null && url.isTextual()) {
          yield new ContentPart.Image(url.asText().startsWith("data:") ? RequestParser.digest(url.asText())
              : url.asText());
        } else if (file != null && file.isTextual()) {
          yield new ContentPart.Image("file:" + file.asText());
        }
        throw new MalformedRequestException(partPath, "an input_image needs an image_url or a file_id");
      }
      default -> null;
    });
  }
}
