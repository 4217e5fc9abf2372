package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Error bodies and stream error events in the format of the API called: OpenAI's
 * {@code {"error": {"message", "type", "param", "code"}}} and Anthropic's
 * {@code {"type": "error", "error": {"type", "message"}}}, with the error type each API uses for a status.
 * Stateless and thread-safe.
 */
public final class ApiErrors {

  private ApiErrors() {}

  /** Anthropic's error type for an HTTP status. */
  public static String anthropicType(int status) {
    return switch (status) {
      case 400, 422 -> "invalid_request_error";
      case 401 -> "authentication_error";
      case 402 -> "billing_error";
      case 403 -> "permission_error";
      case 404 -> "not_found_error";
      case 408, 504 -> "timeout_error";
      case 413 -> "request_too_large";
      case 429 -> "rate_limit_error";
      case 503, 529 -> "overloaded_error";
      default -> "api_error";
    };
  }

  /** OpenAI's error type for an HTTP status. */
  public static String openAiType(int status) {
    return switch (status) {
      case 401 -> "authentication_error";
      case 403 -> "permission_error";
      case 404 -> "not_found_error";
      case 429 -> "rate_limit_error";
      default -> status >= 500 ? "server_error" : "invalid_request_error";
    };
  }

  /** The error body for {@code status} in {@code format}. */
  public static byte[] body(ApiFormat format, int status, String message, @Nullable String param) {
    ObjectNode root = Json.object();
    if (format == ApiFormat.ANTHROPIC_MESSAGES) {
      root.put("type", "error");
      root.putObject("error").put("type", anthropicType(status)).put("message", message);
    } else {
      ObjectNode e = root.putObject("error");
      e.put("message", message);
      e.put("type", openAiType(status));
      if (param == null) {
        e.putNull("param");
      } else {
        e.put("param", param);
      }
      e.put("code", status);
    }
    return Json.bytes(root);
  }

  /** An error event that ends a stream in {@code format}, for a failure after the first byte. */
  public static byte[] streamEvent(ApiFormat format, int status, String message) {
    return switch (format) {
      case ANTHROPIC_MESSAGES -> anthropicEvent(anthropicType(status), message);
      case OPENAI_RESPONSES -> responsesEvent(0, openAiType(status), message);
      case OPENAI_CHAT, OPENAI_COMPLETIONS -> openAiEvent(openAiType(status), message);
    };
  }

  static byte[] anthropicEvent(String type, String message) {
    ObjectNode root = Json.object().put("type", "error");
    root.putObject("error").put("type", type).put("message", message);
    return new SseEvent("error", Json.write(root)).toBytes();
  }

  /** The Responses API's {@code error} event: {@code {"type": "error", "code", "message", "param", ...}}. */
  static byte[] responsesEvent(int sequence, String code, String message) {
    ObjectNode root = Json.object().put("type", "error").put("code", code).put("message", message);
    root.putNull("param");
    root.put("sequence_number", sequence);
    return new SseEvent("error", Json.write(root)).toBytes();
  }

  static byte[] openAiEvent(String type, String message) {
    ObjectNode root = Json.object();
    root.putObject("error").put("message", message).put("type", type).putNull("param").putNull("code");
    return SseEvent.data(Json.write(root)).toBytes();
  }

  /**
   * The human-readable message of an upstream error body in either format, or the body itself (shortened) when
   * it is not a recognised error object.
   */
  public static String messageOf(byte[] body) {
    ObjectNode o = Json.parseObject(body);
    if (o != null) {
      JsonNode e = o.get("error");
      if (e != null && e.isObject() && e.hasNonNull("message")) {
        return e.get("message").asText();
      }
      if (e != null && e.isTextual()) {
        return e.asText();
      }
      if (o.hasNonNull("message")) {
        return o.get("message").asText();
      }
      if (o.hasNonNull("detail")) {
        return o.get("detail").isTextual() ? o.get("detail").asText() : Json.write(o.get("detail"));
      }
    }
    String text = new String(body, StandardCharsets.UTF_8).strip();
    return text.length() > 500 ? text.substring(0, 500) + "..." : text;
  }
}
