package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.routing.Usage;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** The stream translators of the Responses API: its events watched, made from chat chunks, and chained. */
final class ResponsesStreams {

  private ResponsesStreams() {}

  /**
   * Responses events forwarded unchanged, watched for the response id, usage, content, errors and the end
   * ({@code response.completed}, {@code response.incomplete}; {@code response.failed} and {@code error} are errors).
   */
  static final class Passthrough extends Streams.Base {
    private @Nullable String responseId;

    Passthrough(String clientModel) {
      this.clientModel = clientModel;
    }

    @Override
    public @Nullable String responseId() {
      return responseId;
    }

    @Override
    public void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
      String type = event.event();
      ObjectNode o = null;
      if (type == null) {
        o = Json.parseObject(event.data());
        type = o == null ? "" : o.path("type").asText();
      }
      switch (type) {
        case "response.created", "response.in_progress" -> {
          o = o != null ? o : Json.parseObject(event.data());
          // a server whose store is off answers "store": false: nothing to continue there
          if (o != null && responseId == null && o.path("response").path("store").asBoolean(true)) {
            responseId = Json.text(o.path("response"), "id");
          }
          out.accept(withClientModel(event, raw));
          return;
        }
        case "response.output_text.delta", "response.function_call_arguments.delta", "response.refusal.delta",
            "response.reasoning_text.delta", "response.reasoning_summary_text.delta" -> {
          content = true;
          outputEvents++;
        }
        case "response.completed", "response.incomplete" -> {
          content = true;
          complete = true;
          o = o != null ? o : Json.parseObject(event.data());
          JsonNode response = o == null ? Json.object() : o.path("response");
          Usage u = Usages.fromResponses(response.get("usage"));
          if (u != null) {
            usage = u;
          }
          finishReason = "response.incomplete".equals(type) || "incomplete".equals(Json.text(response, "status"))
              ? "incomplete" : "completed";
          if (responseId == null && response.path("store").asBoolean(true)) {
            responseId = Json.text(response, "id");
          }
          out.accept(withClientModel(event, raw));
          return;
        }
        case "response.failed" -> {
          o = o != null ? o : Json.parseObject(event.data());
          JsonNode e = o == null ? Json.object() : o.path("response").path("error");
          error = e.hasNonNull("message") ? e.get("message").asText() : event.data();
        }
        case "error" -> {
          o = o != null ? o : Json.parseObject(event.data());
          error = o == null ? event.data() : o.hasNonNull("message") ? o.get("message").asText()
              : Streams.errorMessage(o);
        }
        default -> {
          // item and part boundaries, annotations, keep-alives: pass through
        }
      }
      out.accept(raw);
    }
  }

  /** Chat Completions chunks in, Responses events out. */
  static final class FromChat extends FromChatChunks {
    private final String requestModel;
    private final long created;
    private int sequence;
    private String id = "resp_gateway";
    private String base = "gateway";
    private String model;
    private final ArrayNode output = Json.array();
    // the item being streamed: a message (text) or a function call (toolIndex)
    private @Nullable ObjectNode openItem;
    private int openToolIndex = -1;
    private final StringBuilder openText = new StringBuilder();

    FromChat(long createdSeconds, String requestModel) {
      this.created = createdSeconds;
      this.requestModel = requestModel;
      this.model = requestModel;
    }

    @Override
    public @Nullable String responseId() {
      return null; // made up by the gateway: no upstream holds it
    }

    @Override
    byte[] errorEvent(String message) {
      return ApiErrors.responsesEvent(sequence++, "server_error", message);
    }

    @Override
    void onChoice(JsonNode choice, Consumer<byte[]> out) {
      JsonNode delta = choice.path("delta");
      String text = Json.text(delta, "content");
      if (text != null && !text.isEmpty()) {
        content = true;
        outputEvents++;
        if (openItem == null || openToolIndex >= 0) {
          close(out);
          openItem = ResponsesTranslation.messageItem("msg_" + base + "_" + output.size(), null, "in_progress");
          added(out);
          ObjectNode part = event("response.content_part.added").put("item_id", itemId())
              .put("output_index", output.size()).put("content_index", 0);
          part.set("part", ResponsesTranslation.outputText(""));
          out.accept(bytes(part));
        }
        openText.append(text);
        out.accept(bytes(event("response.output_text.delta").put("item_id", itemId())
            .put("output_index", output.size()).put("content_index", 0).put("delta", text)));
      }
      for (JsonNode call : delta.path("tool_calls")) {
        content = true;
        outputEvents++;
        int index = call.path("index").asInt(0);
        JsonNode fn = call.path("function");
        if (openItem == null || index != openToolIndex) {
          close(out);
          openToolIndex = index;
          openItem = ResponsesTranslation.functionCallItem("fc_" + base + "_" + output.size(),
              call.path("id").asText(), fn.path("name").asText(), "", "in_progress");
          added(out);
        }
        String args = Json.text(fn, "arguments");
        if (args != null && !args.isEmpty()) {
          openText.append(args);
          out.accept(bytes(event("response.function_call_arguments.delta").put("item_id", itemId())
              .put("output_index", output.size()).put("delta", args)));
        }
      }
      String finish = Json.text(choice, "finish_reason");
      if (finish != null) {
        content = true;
        finishReason = finish;
        close(out);
      }
    }

    @Override
    void onStart(ObjectNode chunk, Consumer<byte[]> out) {
      base = chunk.path("id").asText("gateway").replace("chatcmpl-", "");
      id = "resp_" + base;
      model = chunk.path("model").asText(requestModel);
      ObjectNode created = event("response.created");
      created.set("response", ResponsesTranslation.response(id, this.created, model, null, null, Usage.UNKNOWN));
      out.accept(bytes(created));
      ObjectNode progress = event("response.in_progress");
      progress.set("response", ResponsesTranslation.response(id, this.created, model, null, null, Usage.UNKNOWN));
      out.accept(bytes(progress));
    }

    private String itemId() {
      return java.util.Objects.requireNonNull(openItem).path("id").asText();
    }

    private void added(Consumer<byte[]> out) {
      ObjectNode e = event("response.output_item.added").put("output_index", output.size());
      e.set("item", java.util.Objects.requireNonNull(openItem).deepCopy());
      out.accept(bytes(e));
    }

    /** Ends the open item: its done events, and it joins the output. */
    private void close(Consumer<byte[]> out) {
      ObjectNode item = openItem;
      if (item == null) {
        return;
      }
      String all = openText.toString();
      int index = output.size();
      if (openToolIndex < 0) {
        out.accept(bytes(event("response.output_text.done").put("item_id", itemId()).put("output_index", index)
            .put("content_index", 0).put("text", all)));
        ObjectNode part = event("response.content_part.done").put("item_id", itemId()).put("output_index", index)
            .put("content_index", 0);
        part.set("part", ResponsesTranslation.outputText(all));
        out.accept(bytes(part));
        ((ArrayNode) item.get("content")).add(ResponsesTranslation.outputText(all));
      } else {
        out.accept(bytes(event("response.function_call_arguments.done").put("item_id", itemId())
            .put("output_index", index).put("name", item.path("name").asText()).put("arguments", all)));
        item.put("arguments", all);
      }
      item.put("status", "completed");
      ObjectNode done = event("response.output_item.done").put("output_index", index);
      done.set("item", item);
      out.accept(bytes(done));
      output.add(item);
      openItem = null;
      openToolIndex = -1;
      openText.setLength(0);
    }

    @Override
    void onFinish(Consumer<byte[]> out) {
      close(out);
      ObjectNode completed = event("response.completed");
      ObjectNode response = ResponsesTranslation.response(id, created, model, finishReason, output, usage);
      completed.set("response", response);
      out.accept(bytes(completed));
    }

    private ObjectNode event(String type) {
      return Json.object().put("type", type).put("sequence_number", sequence++);
    }

    private static byte[] bytes(ObjectNode event) {
      return new SseEvent(event.path("type").asText(), Json.write(event)).toBytes();
    }
  }

  /**
   * Two translators in a row: {@code first}'s output events are parsed again and fed to {@code second} (an
   * Anthropic stream becomes chat chunks, which become Responses events). Content and output tokens are counted
   * by the first; the end, usage and finish reason come from the second.
   */
  static final class Chained implements StreamTranslator {
    private final StreamTranslator first;
    private final StreamTranslator second;
    private final SseParser between;
    private Consumer<byte[]> sink = b -> { };

    Chained(StreamTranslator first, StreamTranslator second) {
      this.first = first;
      this.second = second;
      this.between = new SseParser(16 * 1024 * 1024, (e, raw) -> {
        if (e != null) {
          second.onEvent(e, raw, sink);
        }
      });
    }

    @Override
    public void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
      sink = out;
      first.onEvent(event, raw, bytes -> between.feed(ByteBuffer.wrap(bytes)));
    }

    @Override
    public boolean sawContent() {
      return first.sawContent();
    }

    @Override
    public boolean complete() {
      return second.complete();
    }

    @Override
    public @Nullable String upstreamError() {
      String e = first.upstreamError();
      return e != null ? e : second.upstreamError();
    }

    @Override
    public int outputEvents() {
      return first.outputEvents();
    }

    @Override
    public Usage usage() {
      return second.usage();
    }

    @Override
    public @Nullable String finishReason() {
      return second.finishReason();
    }
  }
}
