package dev.kinference.sim.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.Message;
import dev.kinference.request.RequestParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * vLLM's {@code POST /v1/responses} (the OpenAI Responses API) on a simulated server: the response object, its
 * streamed typed events ({@code response.created}, {@code response.in_progress}, {@code response.output_item.added},
 * {@code response.content_part.added}, {@code response.output_text.delta}/{@code .done},
 * {@code response.function_call_arguments.delta}/{@code .done}, {@code response.content_part.done},
 * {@code response.output_item.done}, {@code response.completed}; no {@code [DONE]}), and usage as
 * {@code input_tokens}, {@code input_tokens_details.cached_tokens}, {@code output_tokens}.
 *
 * <p>Responses are stored per server, as vLLM stores them with {@code VLLM_ENABLE_RESPONSES_API_STORE=1}: unless the
 * request says {@code store: false}, its conversation (input and output) is kept, and a later request naming it in
 * {@code previous_response_id} continues it (its prompt is that conversation plus the new input); any other server
 * answers 404, as vLLM does for an id it does not hold. The store keeps the latest {@link #MAX_STORED} responses.
 *
 * <p>The simulator generates text; a request whose {@code tool_choice} is {@code required} or names a function gets
 * a {@code function_call} item instead, its arguments {@code {"input": "<text>"}}. Thread-safe.
 */
final class SimResponses {

  /** Responses kept for {@code previous_response_id}; the oldest goes first. */
  static final int MAX_STORED = 10_000;

  private static final String JSON = SimHttpHandler.JSON;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final SimulatedServer server;
  private final SimHttpHandler http;
  private final RequestParser parser = RequestParser.defaults();
  private final Map<String, List<Message>> stored = Collections.synchronizedMap(
      new LinkedHashMap<String, List<Message>>(256, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, List<Message>> eldest) {
          return size() > MAX_STORED;
        }
      });

  SimResponses(SimulatedServer server, SimHttpHandler http) {
    this.server = server;
    this.http = http;
  }

  /** Whether this server holds the response (for tests: which server a conversation lives on). */
  boolean holds(String responseId) {
    return stored.containsKey(responseId);
  }

  void handle(Request request, Response response, Callback callback) throws IOException, InterruptedException {
    InferenceRequest full;
    SimHttpHandler.Call call;
    ObjectNode body;
    @Nullable String tool;
    try {
      InferenceRequest parsed = parser.parse(ApiFormat.OPENAI_RESPONSES, http.readBody(request));
      body = java.util.Objects.requireNonNull(parsed.body());
      full = withHistory(parsed, body);
      call = http.prepare(full);
      tool = forcedTool(body);
    } catch (SimHttpHandler.HttpError | InvalidRequestException e) {
      SimHttpHandler.refuseOpenAi(e, response, callback);
      return;
    }
    Answer a = new Answer("resp_" + SimHttpHandler.randomHex(),
        (tool == null ? "msg_" : "fc_") + SimHttpHandler.randomHex(), "call_" + SimHttpHandler.randomHex(),
        System.currentTimeMillis() / 1000, call, body, tool);
    ResponseStream stream = server.submit(a.id, call);
    if (!call.stream) {
      SimHttpHandler.Outcome outcome = SimHttpHandler.await(stream);
      if (outcome.failure() != null) {
        SimHttpHandler.send(response, callback, 500, JSON,
            WireJson.openAiError(outcome.failure(), "InternalServerError", 500));
        return;
      }
      String text = server.text().text(call.words, 0, call.words.length);
      store(a, full, text);
      SimHttpHandler.send(response, callback, 200, JSON,
          bytes(a.response("completed", text, call.words.length, outcome.cachedTokens())));
      return;
    }
    stream(a, full, stream, response, callback);
  }

  private void stream(Answer a, InferenceRequest full, ResponseStream stream, Response response, Callback callback)
      throws IOException, InterruptedException {
    StringBuilder text = new StringBuilder();
    EngineStreamRelay.relay(server, a.call, stream, new EngineStreamRelay.Format() {
      @Override
      public byte[] failureBody(String reason) {
        return WireJson.openAiError(reason, "InternalServerError", 500);
      }

      @Override
      public void start(Response r) throws IOException {
        open(a, r);
      }

      @Override
      public void text(Response r, String piece, int sent) throws IOException {
        text.append(piece);
        ObjectNode delta = a.event(a.tool == null ? "response.output_text.delta"
            : "response.function_call_arguments.delta");
        delta.put("item_id", a.itemId).put("output_index", 0);
        if (a.tool == null) {
          delta.put("content_index", 0).put("delta", piece).putArray("logprobs");
        } else {
          String escaped = escaped(piece);
          delta.put("delta", text.length() == piece.length() ? "{\"input\":\"" + escaped : escaped);
        }
        SimHttpHandler.write(r, sse(delta));
      }

      @Override
      public void finish(Response r, Callback cb, ResponseStream.Finished f, int sent, boolean started)
          throws IOException {
        if (!started) {
          SimHttpHandler.startStream(r);
          open(a, r);
        }
        finishAnswer(a, full, text.toString(), f, sent, r, cb);
      }
    }, response, callback);
  }

  /** The events after the last token: the item's text or arguments done, the item done, the response completed. */
  private void finishAnswer(Answer a, InferenceRequest full, String all, ResponseStream.Finished f, int sent,
      Response response, Callback callback) throws IOException {
    if (a.tool == null) {
      SimHttpHandler.write(response, sse(a.event("response.output_text.done").put("item_id", a.itemId)
          .put("output_index", 0).put("content_index", 0).put("text", all)));
      ObjectNode partDone = a.event("response.content_part.done").put("item_id", a.itemId)
          .put("output_index", 0).put("content_index", 0);
      partDone.set("part", outputText(all));
      SimHttpHandler.write(response, sse(partDone));
    } else {
      if (all.isEmpty()) {
        SimHttpHandler.write(response, sse(a.event("response.function_call_arguments.delta")
            .put("item_id", a.itemId).put("output_index", 0).put("delta", "{\"input\":\"")));
      }
      SimHttpHandler.write(response, sse(a.event("response.function_call_arguments.delta")
          .put("item_id", a.itemId).put("output_index", 0).put("delta", "\"}")));
      SimHttpHandler.write(response, sse(a.event("response.function_call_arguments.done")
          .put("item_id", a.itemId).put("output_index", 0).put("name", a.tool)
          .put("arguments", arguments(all))));
    }
    ObjectNode itemDone = a.event("response.output_item.done").put("output_index", 0);
    itemDone.set("item", a.item("completed", all));
    SimHttpHandler.write(response, sse(itemDone));
    store(a, full, all);
    ObjectNode completed = a.event("response.completed");
    completed.set("response", a.response("completed", all, sent, f.cachedPromptTokens()));
    response.write(true, ByteBuffer.wrap(sse(completed)), callback);
  }

  /** The events before the first token: the response created and in progress, its output item and part added. */
  private static void open(Answer a, Response response) throws IOException {
    ObjectNode created = a.event("response.created");
    created.set("response", a.response("in_progress", null, 0, 0));
    SimHttpHandler.write(response, sse(created));
    ObjectNode progress = a.event("response.in_progress");
    progress.set("response", a.response("in_progress", null, 0, 0));
    SimHttpHandler.write(response, sse(progress));
    ObjectNode added = a.event("response.output_item.added").put("output_index", 0);
    added.set("item", a.item("in_progress", null));
    SimHttpHandler.write(response, sse(added));
    if (a.tool == null) {
      ObjectNode part = a.event("response.content_part.added").put("item_id", a.itemId).put("output_index", 0)
          .put("content_index", 0);
      part.set("part", outputText(""));
      SimHttpHandler.write(response, sse(part));
    }
  }

  /** The request with the stored conversation its {@code previous_response_id} names before its own input. */
  private InferenceRequest withHistory(InferenceRequest parsed, ObjectNode body) throws SimHttpHandler.HttpError {
    JsonNode previous = body.get("previous_response_id");
    if (previous == null || !previous.isTextual()) {
      return parsed;
    }
    List<Message> history = stored.get(previous.asText());
    if (history == null) {
      throw new SimHttpHandler.HttpError(404, "invalid_request_error",
          "Response with id '" + previous.asText() + "' not found.");
    }
    List<Message> all = new ArrayList<>(history);
    all.addAll(parsed.messages());
    InferenceRequest.Builder fresh = InferenceRequest.builder(parsed.model()).format(ApiFormat.OPENAI_RESPONSES)
        .messages(all).stream(parsed.stream()).cacheSalt(parsed.cacheSalt()).body(body);
    parsed.toolsJson().forEach(fresh::tool);
    if (parsed.maxTokens() > 0) {
      fresh.maxTokens(parsed.maxTokens());
    }
    return fresh.build();
  }

  private void store(Answer a, InferenceRequest full, String text) {
    if (!a.body.path("store").asBoolean(true)) {
      return;
    }
    List<Message> conversation = new ArrayList<>(full.messages());
    conversation.add(new Message("assistant", List.of(a.tool == null ? new ContentPart.Text(text)
        : new ContentPart.ToolUse(a.callId, a.tool, arguments(text)))));
    stored.put(a.id, List.copyOf(conversation));
  }

  /** The function a request forces: {@code tool_choice} {@code required} (the first function) or a named one. */
  private static @Nullable String forcedTool(ObjectNode body) {
    JsonNode choice = body.get("tool_choice");
    if (choice == null) {
      return null;
    }
    if (choice.isObject() && "function".equals(choice.path("type").asText()) && choice.hasNonNull("name")) {
      return choice.get("name").asText();
    }
    if (choice.isTextual() && choice.asText().equals("required")) {
      for (JsonNode t : body.path("tools")) {
        if ("function".equals(t.path("type").asText()) && t.hasNonNull("name")) {
          return t.get("name").asText();
        }
      }
    }
    return null;
  }

  private static String arguments(String text) {
    return "{\"input\":\"" + escaped(text) + "\"}";
  }

  private static String escaped(String text) {
    try {
      String quoted = MAPPER.writeValueAsString(text);
      return quoted.substring(1, quoted.length() - 1);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a string always serialises", e);
    }
  }

  private static ObjectNode outputText(String text) {
    ObjectNode part = MAPPER.createObjectNode().put("type", "output_text").put("text", text);
    part.putArray("annotations");
    part.putArray("logprobs");
    return part;
  }

  private static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serialises", e);
    }
  }

  /** {@code event: <type>\ndata: <json>\n\n}, as vLLM's {@code _convert_stream_to_sse_events} writes. */
  private static byte[] sse(ObjectNode event) {
    return ("event: " + event.path("type").asText() + "\ndata: " + new String(bytes(event), StandardCharsets.UTF_8)
        + "\n\n").getBytes(StandardCharsets.UTF_8);
  }

  /** One response being written: its ids, its request, and the events' sequence numbers. */
  private static final class Answer {
    final String id;
    final String itemId;
    final String callId;
    final long created;
    final SimHttpHandler.Call call;
    final ObjectNode body;
    final @Nullable String tool;
    private int sequence;

    Answer(String id, String itemId, String callId, long created, SimHttpHandler.Call call, ObjectNode body,
        @Nullable String tool) {
      this.id = id;
      this.itemId = itemId;
      this.callId = callId;
      this.created = created;
      this.call = call;
      this.body = body;
      this.tool = tool;
    }

    ObjectNode event(String type) {
      return MAPPER.createObjectNode().put("type", type).put("sequence_number", sequence++);
    }

    /** The output item: an assistant message, or a function call; {@code text} null while in progress. */
    ObjectNode item(String status, @Nullable String text) {
      ObjectNode item = MAPPER.createObjectNode();
      if (tool == null) {
        item.put("id", itemId).put("type", "message").put("role", "assistant").put("status", status);
        ArrayNode content = item.putArray("content");
        if (text != null) {
          content.add(outputText(text));
        }
      } else {
        item.put("id", itemId).put("type", "function_call").put("call_id", callId).put("name", tool)
            .put("arguments", text == null ? "" : arguments(text)).put("status", status);
      }
      return item;
    }

    /** vLLM's {@code ResponsesResponse}; {@code text} null (no output, no usage) while in progress. */
    ObjectNode response(String status, @Nullable String text, int outputTokens, int cachedTokens) {
      boolean cut = text != null && call.finishReason.equals("length");
      ObjectNode r = MAPPER.createObjectNode();
      r.put("id", id).put("object", "response").put("created_at", created).put("model", call.model);
      r.put("status", cut ? "incomplete" : status);
      if (cut) {
        r.putObject("incomplete_details").put("reason", "max_output_tokens");
      } else {
        r.putNull("incomplete_details");
      }
      r.putNull("error");
      r.set("instructions", body.has("instructions") ? body.get("instructions") : null);
      r.set("metadata", body.has("metadata") ? body.get("metadata") : null);
      ArrayNode output = r.putArray("output");
      if (text != null) {
        output.add(item("completed", text));
      }
      r.put("parallel_tool_calls", body.path("parallel_tool_calls").asBoolean(true));
      r.put("temperature", body.path("temperature").asDouble(1.0));
      r.set("tool_choice", body.has("tool_choice") ? body.get("tool_choice") : r.textNode("auto"));
      r.set("tools", body.has("tools") ? body.get("tools") : r.arrayNode());
      r.put("top_p", body.path("top_p").asDouble(1.0));
      r.put("background", false);
      r.set("max_output_tokens", body.has("max_output_tokens") ? body.get("max_output_tokens") : null);
      r.set("previous_response_id", body.has("previous_response_id") ? body.get("previous_response_id") : null);
      r.putNull("reasoning");
      r.put("service_tier", "auto");
      r.put("store", body.path("store").asBoolean(true));
      r.putObject("text").putObject("format").put("type", "text");
      r.put("truncation", "disabled");
      r.putNull("user");
      if (text == null) {
        r.putNull("usage");
      } else {
        ObjectNode usage = r.putObject("usage");
        int input = call.promptTokens.length;
        usage.put("input_tokens", input);
        usage.putObject("input_tokens_details").put("cached_tokens", Math.max(0, cachedTokens));
        usage.put("output_tokens", outputTokens);
        usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
        usage.put("total_tokens", input + outputTokens);
      }
      return r;
    }
  }
}
