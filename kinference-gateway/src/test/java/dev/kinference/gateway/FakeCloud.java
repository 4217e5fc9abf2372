package dev.kinference.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.FutureCallback;

/**
 * A simulated cloud provider on loopback: a real HTTP server speaking the OpenAI chat API
 * ({@code /v1/chat/completions}, key as {@code Authorization: Bearer}) and the Anthropic messages API
 * ({@code /v1/messages}, {@code x-api-key}), streaming token by token. It answers "Hello from the cloud", or, when
 * the request offers tools, a call of the first tool with {@code {"city":"Paris"}}. It records every request.
 */
final class FakeCloud implements AutoCloseable {

  static final String KEY = "sk-test-cloud-key";
  static final String TEXT = "Hello from the cloud";
  static final ObjectMapper M = new ObjectMapper();

  record Seen(String path, String auth, JsonNode body) {}

  final List<Seen> seen = new CopyOnWriteArrayList<>();
  /** Streams are cut after this many events (0: never). */
  final AtomicInteger cutAfter = new AtomicInteger();
  private final Server server;
  private final ServerConnector connector;

  FakeCloud() throws Exception {
    server = new Server();
    server.setStopTimeout(0);
    connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String path = Request.getPathInContext(request);
        JsonNode body = M.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
        String auth = path.endsWith("/messages") ? String.valueOf(request.getHeaders().get("x-api-key"))
            : String.valueOf(request.getHeaders().get("authorization"));
        seen.add(new Seen(path, auth, body));
        boolean anthropic = path.equals("/v1/messages");
        if (!(anthropic ? KEY : "Bearer " + KEY).equals(auth)) {
          response.setStatus(401);
          Content.Sink.write(response, true, anthropic
              ? "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"bad key\"}}"
              : "{\"error\":{\"message\":\"bad key\",\"type\":\"invalid_request_error\"}}", callback);
          return true;
        }
        boolean tool = body.path("tools").isArray() && !body.path("tools").isEmpty();
        String toolName = tool ? (anthropic ? body.path("tools").get(0).path("name").asText()
            : body.path("tools").get(0).path("function").path("name").asText()) : "";
        int input = body.toString().length() / 4;
        List<String> events = anthropic ? anthropicEvents(body, tool, toolName, input)
            : openAiEvents(body, tool, toolName, input);
        if (!body.path("stream").asBoolean(false)) {
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
          Content.Sink.write(response, true, anthropic ? anthropicMessage(body, tool, toolName, input)
              : openAiCompletion(body, tool, toolName, input), callback);
          return true;
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        int cut = cutAfter.get();
        for (int i = 0; i < events.size(); i++) {
          if (cut > 0 && i == cut) {
            callback.failed(new java.io.IOException("simulated provider crash"));
            return true;
          }
          FutureCallback written = new FutureCallback();
          response.write(false, ByteBuffer.wrap(events.get(i).getBytes(StandardCharsets.UTF_8)), written);
          written.get();
          Thread.sleep(5);
        }
        response.write(true, ByteBuffer.allocate(0), callback);
        return true;
      }
    });
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + connector.getLocalPort();
  }

  /** Requests whose body mentions {@code text}. */
  long requestsMentioning(String text) {
    return seen.stream().filter(s -> s.body().toString().contains(text)).count();
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String[] words() {
    return TEXT.split(" ");
  }

  static String anthropicMessage(JsonNode req, boolean tool, String toolName, int input) {
    ObjectNode m = M.createObjectNode().put("id", "msg_fake").put("type", "message").put("role", "assistant")
        .put("model", req.path("model").asText());
    ArrayNode content = m.putArray("content");
    if (tool) {
      content.addObject().put("type", "tool_use").put("id", "toolu_fake").put("name", toolName)
          .putObject("input").put("city", "Paris");
    } else {
      content.addObject().put("type", "text").put("text", TEXT);
    }
    m.put("stop_reason", tool ? "tool_use" : "end_turn").putNull("stop_sequence");
    m.putObject("usage").put("input_tokens", input).put("cache_read_input_tokens", 0).put("output_tokens", 4);
    return m.toString();
  }

  static String openAiCompletion(JsonNode req, boolean tool, String toolName, int input) {
    ObjectNode c = M.createObjectNode().put("id", "chatcmpl-fake").put("object", "chat.completion")
        .put("created", 1).put("model", req.path("model").asText());
    ObjectNode choice = c.putArray("choices").addObject().put("index", 0);
    ObjectNode msg = choice.putObject("message").put("role", "assistant");
    if (tool) {
      msg.putNull("content");
      ObjectNode call = msg.putArray("tool_calls").addObject().put("id", "call_fake").put("type", "function");
      call.putObject("function").put("name", toolName).put("arguments", "{\"city\":\"Paris\"}");
    } else {
      msg.put("content", TEXT);
    }
    choice.put("finish_reason", tool ? "tool_calls" : "stop");
    c.putObject("usage").put("prompt_tokens", input).put("completion_tokens", 4).put("total_tokens", input + 4);
    return c.toString();
  }

  static List<String> anthropicEvents(JsonNode req, boolean tool, String toolName, int input) {
    List<String> out = new ArrayList<>();
    out.add(event("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_fake\",\"type\":\"message\","
        + "\"role\":\"assistant\",\"model\":\"" + req.path("model").asText() + "\",\"content\":[],"
        + "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":" + input
        + ",\"output_tokens\":1}}}"));
    out.add(event("ping", "{\"type\":\"ping\"}"));
    if (tool) {
      out.add(event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
          + "{\"type\":\"tool_use\",\"id\":\"toolu_fake\",\"name\":\"" + toolName + "\",\"input\":{}}}"));
      out.add(event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
          + "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\"}}"));
      out.add(event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
          + "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}"));
    } else {
      out.add(event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
          + "{\"type\":\"text\",\"text\":\"\"}}"));
      String[] w = words();
      for (int i = 0; i < w.length; i++) {
        out.add(event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
            + "{\"type\":\"text_delta\",\"text\":\"" + (i == 0 ? "" : " ") + w[i] + "\"}}"));
      }
    }
    out.add(event("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"));
    out.add(event("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""
        + (tool ? "tool_use" : "end_turn") + "\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4}}"));
    out.add(event("message_stop", "{\"type\":\"message_stop\"}"));
    return out;
  }

  static List<String> openAiEvents(JsonNode req, boolean tool, String toolName, int input) {
    String head = "{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\""
        + req.path("model").asText() + "\",";
    List<String> out = new ArrayList<>();
    out.add(data(head + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
        + "\"finish_reason\":null}]}"));
    if (tool) {
      out.add(data(head + "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_fake\","
          + "\"type\":\"function\",\"function\":{\"name\":\"" + toolName + "\",\"arguments\":\"\"}}]},"
          + "\"finish_reason\":null}]}"));
      out.add(data(head + "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
          + "{\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}"));
    } else {
      String[] w = words();
      for (int i = 0; i < w.length; i++) {
        out.add(data(head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + (i == 0 ? "" : " ") + w[i]
            + "\"},\"finish_reason\":null}]}"));
      }
    }
    out.add(data(head + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\""
        + (tool ? "tool_calls" : "stop") + "\"}]}"));
    if (req.path("stream_options").path("include_usage").asBoolean(false)) {
      out.add(data(head + "\"choices\":[],\"usage\":{\"prompt_tokens\":" + input
          + ",\"completion_tokens\":4,\"total_tokens\":" + (input + 4) + "}}"));
    }
    out.add("data: [DONE]\n\n");
    return out;
  }

  private static String event(String name, String json) {
    return "event: " + name + "\ndata: " + json + "\n\n";
  }

  private static String data(String json) {
    return "data: " + json + "\n\n";
  }
}
