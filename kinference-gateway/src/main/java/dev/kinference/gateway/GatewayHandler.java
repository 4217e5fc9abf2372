package dev.kinference.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.routing.RequestRejectedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dispatches by path: inference requests to an {@link Exchange}, the rest answered here. Thread-safe.
 *
 * <p>Declared non-blocking, so Jetty calls {@link #handle} on the I/O thread that read the request instead of handing
 * it to a pool thread. What runs there is bounded: an inference body up to {@link #INLINE_BODY_BYTES} is parsed,
 * governed, routed and sent upstream in tens of microseconds (docs/PERFORMANCE.md), and nothing on that path waits
 * unless a plugin does (then {@link Gateway.Builder#blockingPlugins} sends every request to the pool). Larger bodies,
 * token counting (a tokenizer may take milliseconds) and the metrics page run on the server's pool.
 */
final class GatewayHandler extends Handler.Abstract {

  private static final Logger LOG = LoggerFactory.getLogger(GatewayHandler.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static final java.util.Set<String> PROBE_PATHS = java.util.Set.of("/health", "/healthz", "/livez",
      "/ready", "/readyz", "/metrics");

  /** Bodies up to this size (a few thousand tokens) are handled on the I/O thread; larger ones on a pool thread. */
  static final int INLINE_BODY_BYTES = 16 * 1024;

  private final Gateway g;

  GatewayHandler(Gateway g) {
    super(InvocationType.NON_BLOCKING);
    this.g = g;
  }

  @Override
  public boolean handle(Request request, Response response, Callback answered) {
    org.eclipse.jetty.io.Connection connection = request.getConnectionMetaData().getConnection();
    g.slowClients.requestStarted(connection);
    Callback callback = new Callback.Nested(answered) {
      @Override
      public void succeeded() {
        g.slowClients.requestEnded(connection); // first: completing may start the connection's next request
        super.succeeded();
      }

      @Override
      public void failed(Throwable x) {
        g.slowClients.requestEnded(connection);
        super.failed(x);
      }
    };
    String path = Request.getPathInContext(request);
    if (g.isProbeConnector(request.getConnectionMetaData().getConnector())
        && !PROBE_PATHS.contains(path)) {
      return error(response, callback, formatOf(request), 404, "the probe port serves /health, /ready and /metrics "
          + "only; send requests to the main port");
    }
    String method = request.getMethod();
    boolean post = HttpMethod.POST.is(method);
    boolean get = HttpMethod.GET.is(method) || HttpMethod.HEAD.is(method);
    return switch (path) {
      case "/v1/chat/completions" -> post ? inference(request, response, callback, ApiFormat.OPENAI_CHAT)
          : methodNotAllowed(request, response, callback, "POST");
      case "/v1/completions" -> post ? inference(request, response, callback, ApiFormat.OPENAI_COMPLETIONS)
          : methodNotAllowed(request, response, callback, "POST");
      case "/v1/messages" -> post ? inference(request, response, callback, ApiFormat.ANTHROPIC_MESSAGES)
          : methodNotAllowed(request, response, callback, "POST");
      case "/v1/responses" -> post ? inference(request, response, callback, ApiFormat.OPENAI_RESPONSES)
          : methodNotAllowed(request, response, callback, "POST");
      case "/v1/messages/count_tokens" -> post ? countTokens(request, response, callback)
          : methodNotAllowed(request, response, callback, "POST");
      case "/v1/models" -> get ? models(request, response, callback)
          : methodNotAllowed(request, response, callback, "GET");
      case "/health", "/healthz", "/livez" -> text(response, callback, 200, "application/json", "{\"status\":\"ok\"}");
      case "/ready", "/readyz" -> ready(response, callback);
      case "/admin/usage" -> {
        if (!get) {
          yield methodNotAllowed(request, response, callback, "GET");
        }
        UsageEndpoint usage = g.usageEndpoint;
        if (usage == null) {
          yield error(response, callback, ApiFormat.OPENAI_CHAT, 404, "no such path: " + path
              + " (no governance: usage totals are kept by a policy configuration's state store)");
        }
        onPool(request, () -> usage.handle(request, response, callback));
        yield true;
      }
      case "/metrics" -> {
        onPool(request, () -> text(response, callback, 200, "text/plain; version=0.0.4; charset=utf-8",
            g.metrics.render()));
        yield true;
      }
      default -> Pooling.PATHS.contains(path)
          ? post ? pooling(request, response, callback, path) : methodNotAllowed(request, response, callback, "POST")
          : error(response, callback, formatOf(request), 404, "no such path: " + path);
    };
  }

  /** Runs {@code work} on the server's pool: it may take longer than an I/O thread should be held. */
  private static void onPool(Request request, Runnable work) {
    request.getContext().execute(work);
  }

  /**
   * Ready means "configuration loaded and able to serve": this process takes requests. An upstream outage is not a
   * reason to leave the Service (every replica would, and the 503s saying why would go unseen); it shows in
   * {@code /metrics} and in the 503s themselves. A draining gateway (SIGTERM) answers 503 at once, so that the
   * endpoints stop sending it new clients while it finishes what it has.
   */
  private boolean ready(Response response, Callback callback) {
    boolean draining = g.draining();
    return text(response, callback, draining ? 503 : 200, "application/json",
        draining ? "{\"status\":\"draining\"}" : "{\"status\":\"ready\"}");
  }

  /** Anthropic clients send {@code anthropic-version}; everyone else gets OpenAI-format errors. */
  static ApiFormat formatOf(Request request) {
    String p = Request.getPathInContext(request);
    return p.startsWith("/v1/messages") || request.getHeaders().contains("anthropic-version")
        ? ApiFormat.ANTHROPIC_MESSAGES : ApiFormat.OPENAI_CHAT;
  }

  private boolean methodNotAllowed(Request request, Response response, Callback callback, String allowed) {
    response.getHeaders().put(HttpHeader.ALLOW, allowed);
    return error(response, callback, formatOf(request), 405,
        request.getMethod() + " is not allowed here; use " + allowed);
  }

  private boolean inference(Request request, Response response, Callback callback, ApiFormat format) {
    g.lastArrivalNanos = System.nanoTime();
    Exchange x = new Exchange(g, request, response, callback, format);
    if (!x.authenticate()) {
      return true;
    }
    readBody(request, false, bytes -> x.start(bytes), (status, message) ->
        x.respondError(status, message, null, null, status == 413 ? "client_error" : "client_disconnect"));
    return true;
  }

  private boolean pooling(Request request, Response response, Callback callback, String path) {
    g.lastArrivalNanos = System.nanoTime();
    CallerIdentity caller;
    try {
      caller = g.guard.authenticate(ApiFormat.OPENAI_CHAT, name -> request.getHeaders().get(name));
    } catch (RequestRejectedException e) {
      return error(response, callback, ApiFormat.OPENAI_CHAT, e.httpStatus(), e.getMessage());
    }
    Pooling p = new Pooling(g, request, response, callback, path, caller);
    readBody(request, true, p::start, (status, message) ->
        error(response, callback, ApiFormat.OPENAI_CHAT, status, message));
    return true;
  }

  /**
   * Reads the body up to the parser's limit (anything larger is a 413 before parsing), then runs {@code then} on the
   * thread that read its end, or on a pool thread when the body is larger than {@link #INLINE_BODY_BYTES}, the work
   * is {@code heavy}, or plugins may block.
   */
  private void readBody(Request request, boolean heavy, Consumer<byte[]> then, BodyFailure failure) {
    long max = g.parser.maxBodyBytes();
    long declared = request.getLength();
    if (declared > max) {
      failure.fail(413, "body: is too large (" + declared + " > limit " + max + " bytes)");
      return;
    }
    int limit = (int) Math.min(Integer.MAX_VALUE - 16, max + 1);
    org.eclipse.jetty.io.Connection connection = request.getConnectionMetaData().getConnection();
    g.slowClients.readingBody(connection, () -> failure.fail(408, "body: not received within "
        + g.slowClientSettings().bodyTimeout().toSeconds() + " s"));
    Content.Source.asByteArrayAsync(request, limit, Promise.Invocable.from(InvocationType.NON_BLOCKING, (bytes, err) -> {
      g.slowClients.bodyRead(connection);
      if (err != null) {
        Throwable cause = err.getCause() != null ? err.getCause() : err;
        if (cause instanceof java.util.concurrent.TimeoutException) {
          failure.fail(408, "body: not received in time");
        } else if (cause instanceof IOException) {
          failure.fail(400, "body could not be read: " + cause.getMessage());
        } else {
          // Jetty fails a read past the limit with a non-I/O exception.
          failure.fail(413, "body: is too large (limit " + max + " bytes)");
        }
      } else if (bytes.length > max) {
        failure.fail(413, "body: is too large (" + bytes.length + " > limit " + max + " bytes)");
      } else if (heavy || g.blockingPlugins || bytes.length > INLINE_BODY_BYTES) {
        onPool(request, () -> then.accept(bytes));
      } else {
        then.accept(bytes);
      }
    }));
  }

  @FunctionalInterface
  private interface BodyFailure {
    void fail(int status, String message);
  }

  private boolean countTokens(Request request, Response response, Callback callback) {
    ApiFormat format = ApiFormat.ANTHROPIC_MESSAGES;
    try {
      g.guard.authenticate(format, name -> request.getHeaders().get(name));
    } catch (RequestRejectedException e) {
      error(response, callback, format, e.httpStatus(), e.getMessage());
      return true;
    }
    readBody(request, true, bytes -> {
      try {
        ObjectNode root = MAPPER.readTree(bytes) instanceof ObjectNode o ? o : null;
        if (root == null) {
          error(response, callback, format, 400, "body: must be a JSON object");
          return;
        }
        if (!root.has("max_tokens")) {
          root.put("max_tokens", 1); // count_tokens takes no output budget; the parser wants one
        }
        InferenceRequest r = g.parser.parse(format, MAPPER.writeValueAsBytes(root));
        int tokens = r.tokenize(g.router.tokenizer()).tokenCount();
        text(response, callback, 200, "application/json", "{\"input_tokens\":" + tokens + "}");
      } catch (InvalidRequestException e) {
        error(response, callback, format, e.httpStatus(), e.getMessage());
      } catch (IOException e) {
        error(response, callback, format, 400, "body: is not valid JSON: " + e.getMessage());
      } catch (TokenizationException e) {
        error(response, callback, format, 500, "tokenization failed: " + e.getMessage());
      } catch (RuntimeException e) {
        // The callback must complete whatever happens, or the client waits for the idle timeout.
        LOG.error("counting tokens failed", e);
        error(response, callback, format, 500, "counting tokens failed");
      }
    }, (status, message) -> error(response, callback, format, status, message));
    return true;
  }

  private boolean models(Request request, Response response, Callback callback) {
    ApiFormat format = formatOf(request);
    CallerIdentity caller;
    try {
      caller = g.guard.authenticate(format, name -> request.getHeaders().get(name));
    } catch (RequestRejectedException e) {
      error(response, callback, format, e.httpStatus(), e.getMessage());
      return true;
    }
    List<String> allowed = g.guard.models(caller);
    TreeSet<String> names = new TreeSet<>();
    if (allowed != null) {
      names.addAll(allowed);
    } else {
      for (EndpointState e : g.router.fleet().endpoints()) {
        names.add(e.endpoint().model());
      }
    }
    ObjectNode root = MAPPER.createObjectNode();
    ArrayNode data;
    if (format == ApiFormat.ANTHROPIC_MESSAGES) {
      data = root.putArray("data");
      for (String n : names) {
        data.addObject().put("type", "model").put("id", n).put("display_name", n)
            .put("created_at", "1970-01-01T00:00:00Z");
      }
      root.put("has_more", false);
      if (names.isEmpty()) {
        root.putNull("first_id");
        root.putNull("last_id");
      } else {
        root.put("first_id", names.first());
        root.put("last_id", names.last());
      }
    } else {
      root.put("object", "list");
      data = root.putArray("data");
      for (String n : names) {
        data.addObject().put("id", n).put("object", "model").put("created", 0).put("owned_by", "kinference");
      }
    }
    text(response, callback, 200, "application/json", root.toString());
    return true;
  }

  static boolean error(Response response, Callback callback, ApiFormat format, int status,
      @Nullable String message) {
    byte[] body = ApiErrors.body(format, status, message == null ? "error" : message, null);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), callback);
    return true;
  }

  static boolean text(Response response, Callback callback, int status, String type, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
    response.write(true, ByteBuffer.wrap(bytes), callback);
    return true;
  }
}
