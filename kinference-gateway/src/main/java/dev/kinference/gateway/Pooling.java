package dev.kinference.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingException;
import dev.kinference.routing.Usage;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * vLLM's pooling and tokenizer endpoints through the gateway: {@code /v1/embeddings}, {@code /v1/rerank} (and
 * {@code /rerank}, {@code /v2/rerank}), {@code /v1/score} (and {@code /score}), {@code /tokenize} and
 * {@code /detokenize}. Each is governed like a generation (tenant, permissions, aliases and policy rules, limits that
 * count its input tokens and one output token, settled to the server's usage), routed by model to the least loaded
 * local server ({@link Router#rankByLoad}: no prefix term), forwarded whole (not streamed) to the same path, and
 * retried once on another server when the first cannot be reached or answers 5xx. Errors are in OpenAI's format.
 */
final class Pooling {

  static final Set<String> PATHS = Set.of("/v1/embeddings", "/v1/rerank", "/rerank", "/v2/rerank", "/v1/score",
      "/score", "/tokenize", "/detokenize");

  private static final Logger LOG = LoggerFactory.getLogger(Pooling.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final ApiFormat ERRORS = ApiFormat.OPENAI_CHAT;
  private static final int MAX_RESPONSE_BYTES = 64 << 20;
  private static final int ATTEMPTS = 2;

  private final Gateway g;
  private final Request request;
  private final Response response;
  private final Callback callback;
  private final String path;
  private final CallerIdentity caller;
  private @Nullable RequestReservation reservation;
  private String model = "-";
  private String askedModel = "-";
  private final java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();
  private final long arrivalNanos = System.nanoTime();
  /** The request's server span (invalid without tracing); one client span per upstream attempt under it. */
  private final Span span;
  // What the answer records once written (set before write(), read in its callback).
  private volatile @Nullable Endpoint servedBy;
  private volatile Usage charged = Usage.UNKNOWN;
  private volatile double chargedCost;
  private volatile @Nullable String errorType;

  Pooling(Gateway g, Request request, Response response, Callback callback, String path, CallerIdentity caller) {
    this.g = g;
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.path = path;
    this.caller = caller;
    this.span = g.tracing.serverSpan(GenAiNames.poolingOperation(path), request.getHeaders());
    if (span.isRecording()) {
      span.setAttribute("gen_ai.operation.name", GenAiNames.poolingOperation(path));
    }
  }

  /** The body arrived: parse, admit, route, forward. */
  void start(byte[] bytes) {
    g.poolingActive.incrementAndGet(); // every path from here ends in write(), which counts it out
    try {
      ObjectNode root;
      try {
        root = MAPPER.readTree(bytes) instanceof ObjectNode o ? o : null;
      } catch (IOException e) {
        error(400, "body: is not valid JSON: " + e.getMessage(), "client_error");
        return;
      }
      if (root == null) {
        error(400, "body: must be a JSON object", "client_error");
        return;
      }
      JsonNode m = root.get("model");
      if (m == null || m.isNull()) {
        List<String> models = new ArrayList<>(g.router.fleet().snapshot().byModel().keySet());
        if (!path.endsWith("tokenize") || models.size() != 1) {
          error(400, "model: is required", "client_error");
          return;
        }
        root.put("model", models.get(0));
      } else if (!m.isTextual() || m.asText().isBlank()) {
        error(400, "model: must be a non-empty string", "client_error");
        return;
      }
      askedModel = root.get("model").asText();
      model = askedModel;
      InferenceRequest r;
      try {
        r = governed(root);
      } catch (IllegalArgumentException e) {
        error(400, e.getMessage(), "client_error");
        return;
      }
      RequestReservation admitted;
      try {
        admitted = g.guard.admit(caller, r);
      } catch (RequestRejectedException e) {
        if (e.httpStatus() == 429) {
          g.metrics.rateLimited.inc(caller.tenantLabel(), model);
        }
        e.retryAfter().ifPresent(d -> response.getHeaders().put(HttpHeader.RETRY_AFTER,
            Math.max(1, (d.toMillis() + 999) / 1000)));
        error(e.httpStatus(), e.getMessage(), "rejected");
        return;
      }
      reservation = admitted;
      Router.PoolingChoice choice;
      try {
        choice = g.router.rankByLoad(admitted.request());
      } catch (RoutingException e) {
        admitted.release();
        error(e.httpStatus(), e.getMessage(), e.httpStatus() == 404 ? "unknown_model" : "rejected");
        return;
      }
      model = choice.request().model();
      int input = inputEstimate(choice.request());
      send(root, choice.ranked(), 0, input);
    } catch (RuntimeException e) {
      LOG.error("{} failed", path, e);
      RequestReservation r = reservation;
      if (r != null) {
        r.release();
      }
      error(500, "internal error: " + e, "internal");
    }
  }

  /** The request as governance sees it: the texts to embed, rank, score or tokenize as one prompt. */
  private InferenceRequest governed(ObjectNode root) {
    InferenceRequest.Builder b = InferenceRequest.builder(askedModel).tenant(caller.tenant()).maxTokens(1);
    List<Integer> ids = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    switch (path) {
      case "/v1/embeddings" -> collect(root.get("input"), "input", text, ids);
      case "/tokenize" -> {
        if (root.has("messages")) {
          collectMessages(root.get("messages"), text);
        } else {
          collect(root.get("prompt"), "prompt", text, ids);
        }
      }
      case "/detokenize" -> collect(root.get("tokens"), "tokens", text, ids);
      case "/v1/score", "/score" -> {
        collect(root.has("text_1") ? root.get("text_1") : root.get("queries"), "text_1", text, ids);
        collect(root.has("text_2") ? root.get("text_2") : root.get("documents"), "text_2", text, ids);
      }
      default -> {
        collect(root.get("query"), "query", text, ids);
        collect(root.get("documents"), "documents", text, ids);
      }
    }
    if (text.length() == 0 && !ids.isEmpty()) {
      b.promptTokenIds(ids.stream().mapToInt(Integer::intValue).toArray());
    } else {
      b.prompt(text.toString());
    }
    String requestId = request.getHeaders().get("x-request-id");
    if (requestId != null) {
      b.header("x-request-id", requestId);
    }
    return b.body(root).build();
  }

  private static void collect(@Nullable JsonNode n, String field, StringBuilder text, List<Integer> ids) {
    if (n == null || n.isNull()) {
      throw new IllegalArgumentException(field + ": is required");
    }
    if (n.isTextual()) {
      text.append(text.length() == 0 ? "" : "\n").append(n.asText());
    } else if (n.isIntegralNumber()) {
      ids.add(n.asInt());
    } else if (n.isArray()) {
      for (JsonNode e : n) {
        collect(e, field, text, ids);
      }
    } else if (n.isObject() && n.has("text")) {
      collect(n.get("text"), field, text, ids);
    } else if (n.isObject()) {
      text.append(text.length() == 0 ? "" : "\n").append(n);
    } else {
      throw new IllegalArgumentException(field + ": must be text, token ids or a list of them");
    }
  }

  private static void collectMessages(JsonNode messages, StringBuilder text) {
    if (!messages.isArray()) {
      throw new IllegalArgumentException("messages: must be an array");
    }
    for (JsonNode m : messages) {
      JsonNode c = m.get("content");
      if (c != null && c.isTextual()) {
        text.append(text.length() == 0 ? "" : "\n").append(c.asText());
      } else if (c != null && c.isArray()) {
        for (JsonNode part : c) {
          if (part.path("text").isTextual()) {
            text.append(text.length() == 0 ? "" : "\n").append(part.path("text").asText());
          }
        }
      }
    }
  }

  private int inputEstimate(InferenceRequest r) {
    int[] ids = r.promptTokenIds();
    if (ids != null) {
      return ids.length;
    }
    try {
      return r.tokenize(g.router.tokenizer()).tokenCount();
    } catch (dev.kinference.prompt.TokenizationException e) {
      return (int) Math.min(Integer.MAX_VALUE, r.promptChars() / 4);
    }
  }

  private void send(ObjectNode root, List<EndpointState> ranked, int attempt, int input) {
    EndpointState state = ranked.get(attempt);
    Endpoint e = state.endpoint();
    byte[] body = root.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (!e.model().equals(root.path("model").asText())) {
      ObjectNode copy = root.deepCopy();
      copy.put("model", e.model());
      body = copy.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    long generation = state.onDispatched(input);
    Span attemptSpan = g.tracing.child(span, GenAiNames.poolingOperation(path) + " " + e.model(), SpanKind.CLIENT);
    if (attemptSpan.isRecording()) {
      attemptSpan.setAttribute("gen_ai.request.model", e.model());
      attemptSpan.setAttribute("server.address", e.uri().getHost());
      attemptSpan.setAttribute("kinference.endpoint", e.id());
    }
    org.eclipse.jetty.client.Request upstream =
        g.upstreams.localPost(e.uri(), path, body, request.getHeaders().get("x-request-id"));
    upstream.headers(h -> g.tracing.inject(attemptSpan, h::put));
    upstream.send(new BufferingResponseListener(MAX_RESPONSE_BYTES) {
          @Override
          public void onComplete(Result result) {
            try {
              completed(result);
            } catch (RuntimeException ex) {
              LOG.error("{} failed", path, ex);
              fail(e, 500, "internal error: " + ex);
            }
          }

          private void completed(Result result) {
            int status = result.isSucceeded() ? result.getResponse().getStatus() : 502;
            boolean ok = result.isSucceeded() && status < 500;
            state.onFinished(false, input, generation, ok && status < 400);
            GatewayTracing.end(attemptSpan, ok ? null : result.isSucceeded() ? Integer.toString(status) : "io");
            if (!ok && attempt + 1 < Math.min(ATTEMPTS, ranked.size())) {
              send(root, ranked, attempt + 1, input);
              return;
            }
            if (!result.isSucceeded()) {
              Throwable f = result.getFailure();
              fail(e, 502, "upstream " + e.id() + " failed: " + (f == null ? "no response" : f.getMessage()));
              return;
            }
            answer(e, status, getContent(), input);
          }
        });
  }

  private void answer(Endpoint e, int status, byte[] upstream, int input) {
    byte[] out = upstream;
    Usage usage = Usage.UNKNOWN;
    try {
      JsonNode json = MAPPER.readTree(upstream);
      if (json instanceof ObjectNode o) {
        if (status < 400) {
          usage = usage(o, input);
          if (o.has("model") && !askedModel.equals(o.path("model").asText())) {
            o.put("model", askedModel); // the name the client asked for: an alias never shows the served model
            out = MAPPER.writeValueAsBytes(o);
          }
        }
      } else if (status >= 400) {
        out = ApiErrors.body(ERRORS, status, "upstream " + e.id() + " answered " + status, null);
      }
    } catch (IOException ex) {
      if (status < 400) {
        fail(e, 502, "upstream " + e.id() + " answered with a body that is not JSON");
        return;
      }
      out = ApiErrors.body(ERRORS, status, "upstream " + e.id() + " answered " + status, null);
    }
    String errorType = status >= 500 ? "upstream" : status >= 400 ? "client_error" : null;
    double cost = g.cost(e, usage);
    RequestReservation r = reservation;
    if (r != null) {
      r.settle(usage, e, cost, errorType != null);
    }
    record(status, e, usage, cost, errorType);
    if (g.debugHeaders) {
      response.getHeaders().put("x-kinference-endpoint", e.id());
    }
    write(status, out);
  }

  /** The input tokens the server reports, or our estimate when it reports none. */
  private Usage usage(ObjectNode o, int input) {
    JsonNode u = o.path("usage");
    int n = u.path("prompt_tokens").asInt(0);
    if (n <= 0) {
      n = u.path("total_tokens").asInt(0);
    }
    if (n <= 0 && o.path("count").isInt()) {
      n = o.path("count").asInt(); // tokenize
    }
    return new Usage(n > 0 ? n : Math.max(1, input), 0, 0);
  }

  private void fail(Endpoint e, int status, String message) {
    RequestReservation r = reservation;
    if (r != null) {
      r.settle(Usage.UNKNOWN, e, 0, true);
    }
    record(status, e, Usage.UNKNOWN, 0, "upstream");
    write(status, ApiErrors.body(ERRORS, status, message, null));
  }

  private void record(int status, Endpoint e, Usage usage, double cost, @Nullable String errorType) {
    this.servedBy = e;
    this.charged = usage;
    this.chargedCost = cost;
    this.errorType = errorType;
    String tenant = caller.tenantLabel();
    g.metrics.requests.inc(tenant, model, e.id(), Integer.toString(status));
    if (errorType != null) {
      g.metrics.errors.inc(tenant, model, e.id(), errorType);
    }
    if (usage.promptTokens() > 0) {
      g.metrics.tokens.add(usage.promptTokens(), tenant, model, e.id(), "input");
      g.metrics.cost.add(cost, tenant, model, e.id());
    }
  }

  private void error(int status, @Nullable String message, String errorType) {
    this.errorType = errorType;
    g.metrics.requests.inc(caller.tenantLabel(), model, "-", Integer.toString(status));
    g.metrics.errors.inc(caller.tenantLabel(), model, "-", errorType);
    write(status, ApiErrors.body(ERRORS, status, message == null ? "error" : message, null));
  }

  private void write(int status, byte[] body) {
    if (!answered.compareAndSet(false, true)) {
      return;
    }
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), Callback.from(() -> {
      done(status, null);
      callback.succeeded();
    }, x -> {
      done(status, "client_disconnect");
      callback.failed(x);
    }));
  }

  /** No longer active: counted out of {@link Gateway#activeRequests()} (graceful drain, the active gauge). */
  private void done(int status, @Nullable String writeError) {
    String error = writeError != null ? writeError : errorType;
    if (span.isRecording()) {
      span.setAttribute("gen_ai.request.model", askedModel);
      span.setAttribute("http.response.status_code", status);
    }
    GatewayTracing.end(span, error);
    g.recorder.recordPooling(new RequestRecorder.Outcome(request.getMethod(), request.getHttpURI().getPath(),
        caller.tenantLabel(), null, GenAiNames.poolingOperation(path), servedBy, status, 1, charged, chargedCost,
        error, arrivalNanos, 0, System.nanoTime()), model);
    g.poolingActive.decrementAndGet();
  }
}
