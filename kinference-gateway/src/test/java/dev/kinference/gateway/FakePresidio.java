package dev.kinference.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A Presidio analyzer on loopback: {@code POST /analyze} with {@code {"text", "language", ...}} answers a JSON
 * array of {@code {entity_type, start, end, score, analysis_explanation}} for every occurrence of the words it
 * knows (offsets in code points, as Presidio counts them). It can answer late or with a status; it records the
 * bodies it received.
 */
final class FakePresidio implements AutoCloseable {

  static final ObjectMapper M = new ObjectMapper();

  /** Entity type and score of each known word. */
  record Entity(String type, double score) {}

  final Map<String, Entity> known;
  final List<JsonNode> received = new CopyOnWriteArrayList<>();
  /** Answer after this many milliseconds. */
  final AtomicLong delayMillis = new AtomicLong();
  /** Answer with this status instead (0: 200 with results). */
  final AtomicInteger status = new AtomicInteger();
  private final Server server;
  private final ServerConnector connector;

  FakePresidio(Map<String, Entity> known) throws Exception {
    this.known = Map.copyOf(known);
    server = new Server();
    server.setStopTimeout(0);
    connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        JsonNode body = M.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
        received.add(body);
        long delay = delayMillis.get();
        if (delay > 0) {
          Thread.sleep(delay);
        }
        int s = status.get();
        if (!Request.getPathInContext(request).equals("/analyze") || !"POST".equals(request.getMethod())) {
          s = 404;
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        if (s != 0) {
          response.setStatus(s);
          Content.Sink.write(response, true, "{\"error\":\"simulated\"}", callback);
          return true;
        }
        String text = body.path("text").asText();
        ArrayNode out = M.createArrayNode();
        for (Map.Entry<String, Entity> e : FakePresidio.this.known.entrySet()) {
          for (int i = text.indexOf(e.getKey()); i >= 0; i = text.indexOf(e.getKey(), i + 1)) {
            int start = text.codePointCount(0, i);
            out.addObject().put("entity_type", e.getValue().type()).put("start", start)
                .put("end", start + e.getKey().codePointCount(0, e.getKey().length()))
                .put("score", e.getValue().score()).putNull("analysis_explanation");
          }
        }
        Content.Sink.write(response, true, out.toString(), callback);
        return true;
      }
    });
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + connector.getLocalPort();
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
