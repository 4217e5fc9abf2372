package dev.kinference.sim.server;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The JSON bodies and server-sent-event chunks a vLLM server writes, field for field in vLLM's order (pydantic
 * dumps fields in declaration order; streaming chunks are dumped with {@code exclude_unset}, the final usage chunk
 * also with {@code exclude_none}).
 *
 * <p>Stateless and thread-safe.
 */
final class WireJson {

  private static final JsonFactory FACTORY = new JsonFactory();
  private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);
  static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

  private WireJson() {}

  /** Writes one JSON value. */
  @FunctionalInterface
  interface Body {
    void write(JsonGenerator g) throws IOException;
  }

  /**
   * Token counts of a finished (or running) request.
   *
   * @param cachedTokens prompt tokens served from the prefix cache, or -1 to omit {@code prompt_tokens_details}
   */
  record Usage(int promptTokens, int completionTokens, int cachedTokens) {}

  static byte[] json(Body body) {
    ByteArrayBuilder out = new ByteArrayBuilder(512);
    try (JsonGenerator g = FACTORY.createGenerator(out, JsonEncoding.UTF8)) {
      body.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** {@code data: <json>\n\n}. */
  static byte[] sse(Body body) {
    return frame(DATA, json(body));
  }

  /** {@code event: <type>\ndata: <json>\n\n}, as vLLM's Anthropic endpoint writes. */
  static byte[] event(String type, Body body) {
    return frame(("event: " + type + "\ndata: ").getBytes(StandardCharsets.US_ASCII), json(body));
  }

  private static byte[] frame(byte[] head, byte[] json) {
    byte[] out = new byte[head.length + json.length + END.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(json, 0, out, head.length, json.length);
    System.arraycopy(END, 0, out, head.length + json.length, END.length);
    return out;
  }

  // ---- OpenAI chat completions ----

  /** The first chunk of a chat stream: the assistant role and empty content. */
  static byte[] chatRoleChunk(String id, long created, String model, @Nullable Usage continuous) {
    return sse(g -> {
      chunkHead(g, id, "chat.completion.chunk", created, model);
      g.writeArrayFieldStart("choices");
      g.writeStartObject();
      g.writeNumberField("index", 0);
      g.writeObjectFieldStart("delta");
      g.writeStringField("role", "assistant");
      g.writeStringField("content", "");
      g.writeEndObject();
      g.writeNullField("logprobs");
      g.writeNullField("finish_reason");
      g.writeEndObject();
      g.writeEndArray();
      continuousUsage(g, continuous);
      g.writeEndObject();
    });
  }

  /** A content chunk; the last one carries the finish reason and {@code stop_reason}. */
  static byte[] chatContentChunk(String id, long created, String model, String text, @Nullable String finishReason,
      @Nullable Usage continuous) {
    return sse(g -> {
      chunkHead(g, id, "chat.completion.chunk", created, model);
      g.writeArrayFieldStart("choices");
      g.writeStartObject();
      g.writeNumberField("index", 0);
      g.writeObjectFieldStart("delta");
      g.writeStringField("content", text);
      g.writeEndObject();
      g.writeNullField("logprobs");
      if (finishReason == null) {
        g.writeNullField("finish_reason");
      } else {
        g.writeStringField("finish_reason", finishReason);
        g.writeNullField("stop_reason");
      }
      g.writeEndObject();
      g.writeEndArray();
      continuousUsage(g, continuous);
      g.writeEndObject();
    });
  }

  /** The usage chunk sent before {@code [DONE]} with {@code stream_options.include_usage}. */
  static byte[] usageChunk(String id, String object, long created, String model, Usage usage) {
    return sse(g -> {
      chunkHead(g, id, object, created, model);
      g.writeArrayFieldStart("choices");
      g.writeEndArray();
      g.writeFieldName("usage");
      usage(g, usage, true);
      g.writeEndObject();
    });
  }

  static byte[] chatResponse(String id, long created, String model, String text, String finishReason,
      Usage usage) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("id", id);
      g.writeStringField("object", "chat.completion");
      g.writeNumberField("created", created);
      g.writeStringField("model", model);
      g.writeArrayFieldStart("choices");
      g.writeStartObject();
      g.writeNumberField("index", 0);
      g.writeObjectFieldStart("message");
      g.writeStringField("role", "assistant");
      g.writeStringField("content", text);
      g.writeNullField("refusal");
      g.writeNullField("annotations");
      g.writeNullField("audio");
      g.writeNullField("function_call");
      g.writeArrayFieldStart("tool_calls");
      g.writeEndArray();
      g.writeNullField("reasoning_content");
      g.writeEndObject();
      g.writeNullField("logprobs");
      g.writeStringField("finish_reason", finishReason);
      g.writeNullField("stop_reason");
      g.writeEndObject();
      g.writeEndArray();
      g.writeNullField("service_tier");
      g.writeNullField("system_fingerprint");
      g.writeFieldName("usage");
      usage(g, usage, false);
      g.writeNullField("prompt_logprobs");
      g.writeNullField("kv_transfer_params");
      g.writeEndObject();
    });
  }

  // ---- OpenAI completions ----

  static byte[] completionChunk(String id, long created, String model, String text, @Nullable String finishReason,
      @Nullable Usage continuous) {
    return sse(g -> {
      chunkHead(g, id, "text_completion", created, model);
      g.writeArrayFieldStart("choices");
      g.writeStartObject();
      g.writeNumberField("index", 0);
      g.writeStringField("text", text);
      g.writeNullField("logprobs");
      if (finishReason == null) {
        g.writeNullField("finish_reason");
      } else {
        g.writeStringField("finish_reason", finishReason);
      }
      g.writeNullField("stop_reason");
      g.writeEndObject();
      g.writeEndArray();
      if (continuous == null) {
        g.writeNullField("usage");
      } else {
        g.writeFieldName("usage");
        usage(g, continuous, true);
      }
      g.writeEndObject();
    });
  }

  static byte[] completionResponse(String id, long created, String model, String text, String finishReason,
      Usage usage) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("id", id);
      g.writeStringField("object", "text_completion");
      g.writeNumberField("created", created);
      g.writeStringField("model", model);
      g.writeArrayFieldStart("choices");
      g.writeStartObject();
      g.writeNumberField("index", 0);
      g.writeStringField("text", text);
      g.writeNullField("logprobs");
      g.writeStringField("finish_reason", finishReason);
      g.writeNullField("stop_reason");
      g.writeNullField("prompt_logprobs");
      g.writeEndObject();
      g.writeEndArray();
      g.writeNullField("service_tier");
      g.writeNullField("system_fingerprint");
      g.writeFieldName("usage");
      usage(g, usage, false);
      g.writeNullField("kv_transfer_params");
      g.writeEndObject();
    });
  }

  /** vLLM's {@code ErrorResponse}: {@code {"error": {"message", "type", "param", "code"}}}. */
  static byte[] openAiError(String message, String type, int code) {
    return json(g -> {
      g.writeStartObject();
      g.writeObjectFieldStart("error");
      g.writeStringField("message", message);
      g.writeStringField("type", type);
      g.writeNullField("param");
      g.writeNumberField("code", code);
      g.writeEndObject();
      g.writeEndObject();
    });
  }

  /** FastAPI's {@code {"detail": ...}} for unknown paths and methods. */
  static byte[] detail(String detail) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("detail", detail);
      g.writeEndObject();
    });
  }

  /**
   * {@code GET /v1/models}: the base model, then each LoRA adapter with the base model as {@code parent}.
   */
  static byte[] models(String model, List<String> loras, long created, int maxModelLen) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("object", "list");
      g.writeArrayFieldStart("data");
      modelCard(g, model, model, null, created, maxModelLen);
      for (String lora : loras) {
        modelCard(g, lora, lora, model, created, maxModelLen);
      }
      g.writeEndArray();
      g.writeEndObject();
    });
  }

  private static void modelCard(JsonGenerator g, String id, String root, @Nullable String parent, long created,
      int maxModelLen) throws IOException {
    g.writeStartObject();
    g.writeStringField("id", id);
    g.writeStringField("object", "model");
    g.writeNumberField("created", created);
    g.writeStringField("owned_by", "vllm");
    g.writeStringField("root", root);
    if (parent == null) {
      g.writeNullField("parent");
    } else {
      g.writeStringField("parent", parent);
    }
    g.writeNumberField("max_model_len", maxModelLen);
    g.writeArrayFieldStart("permission");
    g.writeStartObject();
    g.writeStringField("id", "modelperm-" + Integer.toHexString(id.hashCode()));
    g.writeStringField("object", "model_permission");
    g.writeNumberField("created", created);
    g.writeBooleanField("allow_create_engine", false);
    g.writeBooleanField("allow_sampling", true);
    g.writeBooleanField("allow_logprobs", true);
    g.writeBooleanField("allow_search_indices", false);
    g.writeBooleanField("allow_view", true);
    g.writeBooleanField("allow_fine_tuning", false);
    g.writeStringField("organization", "*");
    g.writeNullField("group");
    g.writeBooleanField("is_blocking", false);
    g.writeEndObject();
    g.writeEndArray();
    g.writeEndObject();
  }

  /** {@code POST /tokenize}. */
  static byte[] tokenize(int[] tokens, int maxModelLen) {
    return json(g -> {
      g.writeStartObject();
      g.writeNumberField("count", tokens.length);
      g.writeNumberField("max_model_len", maxModelLen);
      g.writeArrayFieldStart("tokens");
      for (int t : tokens) {
        g.writeNumber(t);
      }
      g.writeEndArray();
      g.writeNullField("token_strs");
      g.writeEndObject();
    });
  }

  // ---- Anthropic messages ----

  /** vLLM's {@code message_start}: dumped with {@code exclude_unset}, so without {@code type} and {@code role}. */
  static byte[] messageStart(String id, String model, int inputTokens) {
    return event("message_start", g -> {
      g.writeStartObject();
      g.writeStringField("type", "message_start");
      g.writeObjectFieldStart("message");
      g.writeStringField("id", id);
      g.writeArrayFieldStart("content");
      g.writeEndArray();
      g.writeStringField("model", model);
      g.writeNullField("stop_reason");
      g.writeNullField("stop_sequence");
      g.writeObjectFieldStart("usage");
      g.writeNumberField("input_tokens", inputTokens);
      g.writeNumberField("output_tokens", 0);
      g.writeEndObject();
      g.writeEndObject();
      g.writeEndObject();
    });
  }

  static byte[] contentBlockStart(int index) {
    return event("content_block_start", g -> {
      g.writeStartObject();
      g.writeStringField("type", "content_block_start");
      g.writeObjectFieldStart("content_block");
      g.writeStringField("type", "text");
      g.writeStringField("text", "");
      g.writeEndObject();
      g.writeNumberField("index", index);
      g.writeEndObject();
    });
  }

  static byte[] contentBlockDelta(int index, String text) {
    return event("content_block_delta", g -> {
      g.writeStartObject();
      g.writeStringField("type", "content_block_delta");
      g.writeObjectFieldStart("delta");
      g.writeStringField("type", "text_delta");
      g.writeStringField("text", text);
      g.writeEndObject();
      g.writeNumberField("index", index);
      g.writeEndObject();
    });
  }

  static byte[] contentBlockStop(int index) {
    return event("content_block_stop", g -> {
      g.writeStartObject();
      g.writeStringField("type", "content_block_stop");
      g.writeNumberField("index", index);
      g.writeEndObject();
    });
  }

  static byte[] messageDelta(String stopReason, int inputTokens, int outputTokens) {
    return event("message_delta", g -> {
      g.writeStartObject();
      g.writeStringField("type", "message_delta");
      g.writeObjectFieldStart("delta");
      g.writeStringField("stop_reason", stopReason);
      g.writeEndObject();
      g.writeObjectFieldStart("usage");
      g.writeNumberField("input_tokens", inputTokens);
      g.writeNumberField("output_tokens", outputTokens);
      g.writeEndObject();
      g.writeEndObject();
    });
  }

  static byte[] messageStop() {
    return event("message_stop", g -> {
      g.writeStartObject();
      g.writeStringField("type", "message_stop");
      g.writeEndObject();
    });
  }

  /** The non-streaming message, dumped with {@code exclude_none}. */
  static byte[] message(String id, String model, String text, String stopReason, int inputTokens,
      int outputTokens) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("id", id);
      g.writeStringField("type", "message");
      g.writeStringField("role", "assistant");
      g.writeArrayFieldStart("content");
      if (!text.isEmpty()) {
        g.writeStartObject();
        g.writeStringField("type", "text");
        g.writeStringField("text", text);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeStringField("model", model);
      g.writeStringField("stop_reason", stopReason);
      g.writeObjectFieldStart("usage");
      g.writeNumberField("input_tokens", inputTokens);
      g.writeNumberField("output_tokens", outputTokens);
      g.writeEndObject();
      g.writeEndObject();
    });
  }

  static byte[] anthropicError(String type, String message) {
    return json(g -> {
      g.writeStartObject();
      g.writeStringField("type", "error");
      g.writeObjectFieldStart("error");
      g.writeStringField("type", type);
      g.writeStringField("message", message);
      g.writeEndObject();
      g.writeEndObject();
    });
  }

  static byte[] countTokens(int inputTokens) {
    return json(g -> {
      g.writeStartObject();
      g.writeNumberField("input_tokens", inputTokens);
      g.writeEndObject();
    });
  }

  /** vLLM maps OpenAI finish reasons to Anthropic stop reasons this way. */
  static String stopReason(String finishReason) {
    return switch (finishReason) {
      case "length" -> "max_tokens";
      case "tool_calls" -> "tool_use";
      default -> "end_turn";
    };
  }

  private static void chunkHead(JsonGenerator g, String id, String object, long created, String model)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("id", id);
    g.writeStringField("object", object);
    g.writeNumberField("created", created);
    g.writeStringField("model", model);
  }

  private static void continuousUsage(JsonGenerator g, @Nullable Usage continuous) throws IOException {
    if (continuous != null) {
      g.writeFieldName("usage");
      usage(g, continuous, true);
    }
  }

  /** {@code UsageInfo}: prompt, total, completion, then details (omitted or null when unknown). */
  private static void usage(JsonGenerator g, Usage u, boolean omitNull) throws IOException {
    g.writeStartObject();
    g.writeNumberField("prompt_tokens", u.promptTokens());
    g.writeNumberField("total_tokens", u.promptTokens() + u.completionTokens());
    g.writeNumberField("completion_tokens", u.completionTokens());
    if (u.cachedTokens() >= 0) {
      g.writeObjectFieldStart("prompt_tokens_details");
      g.writeNumberField("cached_tokens", u.cachedTokens());
      g.writeEndObject();
    } else if (!omitNull) {
      g.writeNullField("prompt_tokens_details");
    }
    g.writeEndObject();
  }
}
