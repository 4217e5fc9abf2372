package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.routing.Usage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** The stream translators. */
final class Streams {

  private Streams() {}

  private static final String MODEL_KEY = "\"model\":\"";

  abstract static class Base implements StreamTranslator {
    boolean content;
    boolean complete;
    @Nullable String error;
    Usage usage = Usage.UNKNOWN;
    @Nullable String finishReason;
    int outputEvents;
    /** The model name the client asked for, which events forwarded as they are must carry. */
    String clientModel = "";

    @Override
    public int outputEvents() {
      return outputEvents;
    }

    /**
     * {@code raw}, or the event again with its {@code "model":"..."} set to the client's model name when the server
     * named its own (an alias or a policy's rewrite must not show through). Model names carry no quotes, so the value
     * ends at the next one.
     */
    byte[] withClientModel(SseEvent event, byte[] raw) {
      String data = event.data();
      int at = data.indexOf(MODEL_KEY);
      if (clientModel.isEmpty() || at < 0) {
        return raw;
      }
      int start = at + MODEL_KEY.length();
      int end = data.indexOf('"', start);
      if (end < 0 || (end - start == clientModel.length() && data.regionMatches(start, clientModel, 0, end - start))) {
        return raw;
      }
      return new SseEvent(event.event(), data.substring(0, start) + clientModel + data.substring(end)).toBytes();
    }

    @Override
    public boolean sawContent() {
      return content;
    }

    @Override
    public boolean complete() {
      return complete;
    }

    @Override
    public @Nullable String upstreamError() {
      return error;
    }

    @Override
    public Usage usage() {
      return usage;
    }

    @Override
    public @Nullable String finishReason() {
      return finishReason;
    }
  }

  static String errorMessage(JsonNode error) {
    JsonNode e = error.path("error");
    String m = Json.text(e, "message");
    if (m == null) {
      m = Json.text(error, "message");
    }
    return m == null ? Json.write(error) : m;
  }

  /**
   * OpenAI chat or completions chunks forwarded unchanged, watched for usage and errors. The usage-only chunk the
   * gateway asked for on the client's behalf is dropped when the client did not ask for it.
   */
  static final class OpenAiPassthrough extends Base {
    private final boolean forwardUsageChunk;

    OpenAiPassthrough(boolean forwardUsageChunk, String clientModel) {
      this.forwardUsageChunk = forwardUsageChunk;
      this.clientModel = clientModel;
    }

    @Override
    public void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
      String data = event.data();
      if (event.isDone()) {
        complete = true;
        out.accept(raw);
        return;
      }
      // Parse only chunks that may carry usage or an error; content chunks pass untouched.
      if (data.contains("\"usage\"") || data.contains("\"error\"")) {
        ObjectNode chunk = Json.parseObject(data);
        if (chunk != null) {
          if (chunk.has("error") && !chunk.has("choices")) {
            error = errorMessage(chunk);
            out.accept(raw);
            return;
          }
          Usage u = Usages.fromOpenAi(chunk.get("usage"));
          if (u != null) {
            usage = u;
          }
          JsonNode choices = chunk.path("choices");
          if (choices.isArray() && choices.isEmpty() && u != null) {
            if (forwardUsageChunk) {
              out.accept(withClientModel(event, raw));
            }
            return;
          }
          noteFinish(choices);
        }
      } else if (data.contains("\"finish_reason\":\"") || data.contains("\"finish_reason\": \"")) {
        ObjectNode chunk = Json.parseObject(data);
        if (chunk != null) {
          noteFinish(chunk.path("choices"));
        }
      }
      content = true;
      if (carriesTokens(data)) {
        outputEvents++;
      }
      out.accept(withClientModel(event, raw));
    }

    /**
     * Whether a chunk carries generated text, reasoning or a tool call (not only a role, or only a finish reason),
     * judged without parsing: chat's {@code "content":"x"}, completions' {@code "text":"x"}, reasoning, tool calls.
     */
    private static boolean carriesTokens(String data) {
      return nonEmpty(data, "\"content\":") || nonEmpty(data, "\"text\":") || data.contains("\"tool_calls\"")
          || nonEmpty(data, "\"reasoning_content\":") || nonEmpty(data, "\"reasoning\":");
    }

    /** Whether {@code "name":"x...} with a non-empty string follows, spaces after the colon allowed. */
    private static boolean nonEmpty(String data, String field) {
      String name = field;
      int at = data.indexOf(name);
      if (at < 0) {
        return false;
      }
      int i = at + name.length();
      while (i < data.length() && data.charAt(i) == ' ') {
        i++;
      }
      return i + 1 < data.length() && data.charAt(i) == '"' && data.charAt(i + 1) != '"';
    }

    private void noteFinish(JsonNode choices) {
      for (JsonNode c : choices) {
        String f = Json.text(c, "finish_reason");
        if (f != null) {
          finishReason = f;
        }
      }
    }
  }

  /** Anthropic events forwarded unchanged, watched for usage, content, errors and the end. */
  static final class AnthropicPassthrough extends Base {
    AnthropicPassthrough(String clientModel) {
      this.clientModel = clientModel;
    }

    @Override
    public void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
      String type = event.event();
      if (type == null) {
        ObjectNode o = Json.parseObject(event.data());
        type = o == null ? "" : o.path("type").asText();
      }
      switch (type) {
        case "message_start" -> {
          ObjectNode o = Json.parseObject(event.data());
          Usage u = o == null ? null : Usages.fromAnthropic(o.path("message").get("usage"));
          if (u != null) {
            usage = u;
          }
        }
        case "content_block_start", "content_block_stop" -> content = true;
        case "content_block_delta" -> {
          content = true;
          outputEvents++;
        }
        case "message_delta" -> {
          content = true;
          ObjectNode o = Json.parseObject(event.data());
          if (o != null) {
            JsonNode u = o.get("usage");
            if (u != null && u.isObject()) {
              usage = Usages.mergeAnthropic(usage, u);
            }
            String stop = Json.text(o.path("delta"), "stop_reason");
            if (stop != null) {
              finishReason = stop;
            }
          }
        }
        case "message_stop" -> complete = true;
        case "error" -> {
          ObjectNode o = Json.parseObject(event.data());
          error = o == null ? event.data() : errorMessage(o);
        }
        default -> {
          // ping and future event types pass through
        }
      }
      out.accept("message_start".equals(type) ? withClientModel(event, raw) : raw);
    }
  }

  /** OpenAI chat chunks in, Anthropic message events out. */
  static final class OpenAiToAnthropic extends FromChatChunks {
    private int blockIndex = -1;
    private @Nullable String openBlock; // "text", "thinking" or "tool_use"
    private int openToolIndex = -1;
    private @Nullable String stopSequence;
    private final String requestModel;

    OpenAiToAnthropic(String requestModel) {
      this.requestModel = requestModel;
    }

    @Override
    byte[] errorEvent(String message) {
      return ApiErrors.anthropicEvent("api_error", message);
    }

    @Override
    void onChoice(JsonNode choice, Consumer<byte[]> out) {
      JsonNode delta = choice.path("delta");
      if (delta.isObject() && !delta.isEmpty()) {
        outputEvents++;
      }
      String reasoning = Json.text(delta, "reasoning_content");
      if (reasoning == null) {
        reasoning = Json.text(delta, "reasoning");
      }
      if (reasoning != null && !reasoning.isEmpty()) {
        content = true;
        open("thinking", -1, Json.object().put("type", "thinking").put("thinking", "").put("signature", ""), out);
        delta(Json.object().put("type", "thinking_delta").put("thinking", reasoning), out);
      }
      String text = Json.text(delta, "content");
      if (text != null && !text.isEmpty()) {
        content = true;
        open("text", -1, Json.object().put("type", "text").put("text", ""), out);
        delta(Json.object().put("type", "text_delta").put("text", text), out);
      }
      for (JsonNode call : delta.path("tool_calls")) {
        content = true;
        int index = call.path("index").asInt(0);
        JsonNode fn = call.path("function");
        if (!"tool_use".equals(openBlock) || index != openToolIndex) {
          ObjectNode block = Json.object().put("type", "tool_use").put("id", call.path("id").asText())
              .put("name", fn.path("name").asText());
          block.putObject("input");
          open("tool_use", index, block, out);
        }
        String args = Json.text(fn, "arguments");
        if (args != null && !args.isEmpty()) {
          delta(Json.object().put("type", "input_json_delta").put("partial_json", args), out);
        }
      }
      String finish = Json.text(choice, "finish_reason");
      if (finish != null) {
        content = true;
        finishReason = ResponseTranslation.anthropicStopReason(finish, choice.get("stop_reason"));
        if (finishReason.equals("stop_sequence")) {
          stopSequence = choice.path("stop_reason").asText();
        }
        close(out);
      }
    }

    @Override
    void onStart(ObjectNode chunk, Consumer<byte[]> out) {
      ObjectNode message = Json.object();
      message.put("id", ResponseTranslation.anthropicId(chunk.path("id").asText("msg_gateway")));
      message.put("type", "message");
      message.put("role", "assistant");
      message.put("model", chunk.path("model").asText(requestModel));
      message.putArray("content");
      message.putNull("stop_reason");
      message.putNull("stop_sequence");
      // OpenAI reports input tokens only at the end; message_delta carries the real counts.
      message.set("usage", ResponseTranslation.anthropicUsage(Usage.UNKNOWN));
      ObjectNode e = Json.object().put("type", "message_start");
      e.set("message", message);
      out.accept(new SseEvent("message_start", Json.write(e)).toBytes());
    }

    private void open(String kind, int toolIndex, ObjectNode block, Consumer<byte[]> out) {
      if (kind.equals(openBlock) && (!kind.equals("tool_use") || toolIndex == openToolIndex)) {
        return;
      }
      close(out);
      blockIndex++;
      openBlock = kind;
      openToolIndex = toolIndex;
      ObjectNode e = Json.object().put("type", "content_block_start").put("index", blockIndex);
      e.set("content_block", block);
      out.accept(new SseEvent("content_block_start", Json.write(e)).toBytes());
    }

    private void delta(ObjectNode delta, Consumer<byte[]> out) {
      ObjectNode e = Json.object().put("type", "content_block_delta").put("index", blockIndex);
      e.set("delta", delta);
      out.accept(new SseEvent("content_block_delta", Json.write(e)).toBytes());
    }

    private void close(Consumer<byte[]> out) {
      if (openBlock == null) {
        return;
      }
      openBlock = null;
      openToolIndex = -1;
      ObjectNode e = Json.object().put("type", "content_block_stop").put("index", blockIndex);
      out.accept(new SseEvent("content_block_stop", Json.write(e)).toBytes());
    }

    @Override
    void onFinish(Consumer<byte[]> out) {
      close(out);
      ObjectNode e = Json.object().put("type", "message_delta");
      ObjectNode d = e.putObject("delta");
      d.put("stop_reason", finishReason == null ? "end_turn" : finishReason);
      if (stopSequence != null) {
        d.put("stop_sequence", stopSequence);
      } else {
        d.putNull("stop_sequence");
      }
      e.set("usage", ResponseTranslation.anthropicUsage(usage));
      out.accept(new SseEvent("message_delta", Json.write(e)).toBytes());
      out.accept(new SseEvent("message_stop", "{\"type\":\"message_stop\"}").toBytes());
    }
  }

  /** Anthropic message events in, OpenAI chat chunks out. */
  static final class AnthropicToOpenAi extends Base {
    private final boolean includeUsage;
    private final long created;
    private String id = "chatcmpl-gateway";
    private String model;
    private int toolIndex = -1;

    AnthropicToOpenAi(boolean includeUsage, long createdSeconds, String requestModel) {
      this.includeUsage = includeUsage;
      this.created = createdSeconds;
      this.model = requestModel;
    }

    @Override
    public void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
      ObjectNode o = Json.parseObject(event.data());
      if (o == null) {
        return;
      }
      String type = event.event() != null ? event.event() : o.path("type").asText();
      switch (type) {
        case "message_start" -> {
          JsonNode message = o.path("message");
          id = ResponseTranslation.openAiId(message.path("id").asText(id));
          model = message.path("model").asText(model);
          Usage u = Usages.fromAnthropic(message.get("usage"));
          if (u != null) {
            usage = u;
          }
          ObjectNode delta = Json.object().put("role", "assistant").put("content", "");
          out.accept(chunk(delta, null));
        }
        case "content_block_start" -> {
          content = true;
          JsonNode block = o.path("content_block");
          if ("tool_use".equals(Json.text(block, "type"))) {
            toolIndex++;
            ObjectNode call = Json.object().put("index", toolIndex).put("id", block.path("id").asText())
                .put("type", "function");
            call.putObject("function").put("name", block.path("name").asText()).put("arguments", "");
            ObjectNode delta = Json.object();
            delta.putArray("tool_calls").add(call);
            out.accept(chunk(delta, null));
          } else if ("text".equals(Json.text(block, "type")) && !block.path("text").asText().isEmpty()) {
            out.accept(chunk(Json.object().put("content", block.path("text").asText()), null));
          }
        }
        case "content_block_delta" -> {
          content = true;
          outputEvents++;
          JsonNode d = o.path("delta");
          switch (d.path("type").asText()) {
            case "text_delta" -> out.accept(chunk(Json.object().put("content", d.path("text").asText()), null));
            case "thinking_delta" ->
                out.accept(chunk(Json.object().put("reasoning_content", d.path("thinking").asText()), null));
            case "input_json_delta" -> {
              ObjectNode call = Json.object().put("index", Math.max(0, toolIndex));
              call.putObject("function").put("arguments", d.path("partial_json").asText());
              ObjectNode delta = Json.object();
              delta.putArray("tool_calls").add(call);
              out.accept(chunk(delta, null));
            }
            default -> {
              // signature and citation deltas have no OpenAI form
            }
          }
        }
        case "message_delta" -> {
          content = true;
          JsonNode u = o.get("usage");
          if (u != null && u.isObject()) {
            usage = Usages.mergeAnthropic(usage, u);
          }
          finishReason = ResponseTranslation.openAiFinishReason(Json.text(o.path("delta"), "stop_reason"));
          out.accept(chunk(Json.object(), finishReason));
        }
        case "message_stop" -> {
          if (complete) {
            return;
          }
          complete = true;
          if (includeUsage) {
            ObjectNode c = head();
            c.putArray("choices");
            c.set("usage", ResponseTranslation.openAiUsage(usage));
            out.accept(SseEvent.data(Json.write(c)).toBytes());
          }
          out.accept(SseEvent.data(SseEvent.DONE).toBytes());
        }
        case "error" -> {
          error = errorMessage(o);
          out.accept(ApiErrors.openAiEvent(o.path("error").path("type").asText("api_error"), error));
        }
        default -> {
          // content_block_stop and ping have no OpenAI form
        }
      }
    }

    private ObjectNode head() {
      ObjectNode c = Json.object();
      c.put("id", id);
      c.put("object", "chat.completion.chunk");
      c.put("created", created);
      c.put("model", model);
      return c;
    }

    private byte[] chunk(ObjectNode delta, @Nullable String finish) {
      ObjectNode c = head();
      ArrayNode choices = c.putArray("choices");
      ObjectNode choice = choices.addObject();
      choice.put("index", 0);
      choice.set("delta", delta);
      choice.putNull("logprobs");
      if (finish == null) {
        choice.putNull("finish_reason");
      } else {
        choice.put("finish_reason", finish);
      }
      return SseEvent.data(Json.write(c)).toBytes();
    }
  }
}
