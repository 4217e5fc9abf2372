package dev.kinference.gateway;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import org.eclipse.jetty.http.HttpFields;
import org.jspecify.annotations.Nullable;

/**
 * The spans of one {@link Exchange}: the server span ({@code chat <model>}) and under it one span per phase,
 * {@code admission}, {@code routing} (one per decision), {@code queue} (while it waited) and one client span per
 * upstream {@link Attempt}, with the GenAI semantic conventions' attributes; the first token is an event on the
 * attempt's span. Each span is started and ended by the phase that owns it; the fields are volatile because phases
 * run on different threads.
 */
final class ExchangeTrace {

  private final GatewayTracing tracing;
  private final String operation;
  private final Span server;
  private volatile Span admission = Span.getInvalid();
  private volatile Span queue = Span.getInvalid();

  ExchangeTrace(GatewayTracing tracing, String operation, HttpFields requestHeaders) {
    this.tracing = tracing;
    this.operation = operation;
    this.server = tracing.serverSpan(operation, requestHeaders);
    if (server.isRecording()) {
      server.setAttribute("gen_ai.operation.name", operation);
    }
  }

  Span server() {
    return server;
  }

  void admissionStarted() {
    admission = tracing.child(server, "admission", SpanKind.INTERNAL);
  }

  /** Admission ended: admitted ({@code request} set) or refused (null). */
  void admissionEnded(@Nullable InferenceRequest request, @Nullable String errorType) {
    if (request != null && server.isRecording()) {
      server.updateName(operation + " " + request.model());
      server.setAttribute("gen_ai.request.model", request.model());
      server.setAttribute("kinference.tenant", request.tenant() == null ? "" : request.tenant());
      server.setAttribute("kinference.stream", request.stream());
    }
    GatewayTracing.end(admission, request == null ? (errorType == null ? "rejected" : errorType) : null);
  }

  Span routingStarted() {
    return tracing.child(server, "routing", SpanKind.INTERNAL);
  }

  /** The router decided: which endpoint, why (cached prefix, predicted wait, the scores), and what happens next. */
  static void routed(Span routing, RoutingDecision d, String outcome) {
    if (routing.isRecording()) {
      routing.setAttribute("kinference.routing.outcome", outcome);
      routing.setAttribute("kinference.routing.endpoint", d.endpoint().id());
      routing.setAttribute("kinference.routing.reason", d.endpoint().isExternal() ? "fallback"
          : d.cachedPrefixTokens() > 0 ? "prefix_cache" : "load");
      routing.setAttribute("kinference.routing.cached_prefix_tokens", d.cachedPrefixTokens());
      routing.setAttribute("kinference.routing.prompt_tokens", d.promptTokens());
      routing.setAttribute("kinference.routing.predicted_ttft_s", d.predictedTtft().toNanos() * 1e-9);
      routing.setAttribute("kinference.routing.alternates", d.alternates().size());
      routing.setAttribute("kinference.routing.explain", d.explain());
      if (!d.notes().isEmpty()) {
        routing.setAttribute("kinference.routing.notes", String.join("; ", d.notes()));
      }
    }
    routing.end();
  }

  void queued() {
    queue = tracing.child(server, "queue", SpanKind.INTERNAL);
  }

  /** Left the queue: {@code dispatched}, {@code timeout}, {@code full}, {@code cancelled} or {@code refused}. */
  void leftQueue(String outcome) {
    Span q = queue;
    if (q.isRecording()) {
      q.setAttribute("kinference.queue.outcome", outcome);
    }
    GatewayTracing.end(q, "dispatched".equals(outcome) ? null : outcome);
  }

  /** The client span of one upstream attempt. */
  Span attemptStarted(RoutingDecision d, int number, @Nullable String retryCause) {
    Span s = tracing.child(server, operation + " " + d.request().model(), SpanKind.CLIENT);
    if (s.isRecording()) {
      Endpoint e = d.endpoint();
      s.setAttribute("gen_ai.operation.name", operation);
      s.setAttribute("gen_ai.provider.name", GenAiNames.provider(e));
      s.setAttribute("gen_ai.request.model", d.request().model());
      s.setAttribute("gen_ai.response.model", GenAiNames.responseModel(e));
      String host = e.uri().getHost();
      if (host != null) {
        s.setAttribute("server.address", host);
        s.setAttribute("server.port", e.uri().getPort());
      }
      s.setAttribute("kinference.endpoint", e.id());
      s.setAttribute("kinference.attempt", number);
      if (retryCause != null) {
        s.setAttribute("kinference.retry_of", retryCause);
      }
    }
    return s;
  }

  /** The first content reached the client (or the whole answer, for a response that is not streamed). */
  void firstToken(Span attempt, long sinceArrivalNanos) {
    if (attempt.isRecording()) {
      attempt.addEvent("gen_ai.first_token", io.opentelemetry.api.common.Attributes.of(
          io.opentelemetry.api.common.AttributeKey.doubleKey("gen_ai.server.time_to_first_token"),
          sinceArrivalNanos * 1e-9));
    }
  }

  void inject(Span attempt, java.util.function.BiConsumer<String, String> header) {
    tracing.inject(attempt, header);
  }

  /** The exchange was recorded: its outcome on the server span, which ends. */
  void finished(int status, @Nullable Endpoint endpoint, Usage usage, @Nullable String errorType, int attempts) {
    if (server.isRecording()) {
      server.setAttribute("http.response.status_code", status);
      server.setAttribute("gen_ai.provider.name", GenAiNames.provider(endpoint));
      if (endpoint != null) {
        server.setAttribute("gen_ai.response.model", GenAiNames.responseModel(endpoint));
        server.setAttribute("kinference.endpoint", endpoint.id());
        server.setAttribute("gen_ai.usage.input_tokens", usage.promptTokens());
        server.setAttribute("gen_ai.usage.output_tokens", usage.completionTokens());
      }
      server.setAttribute("kinference.attempts", attempts);
    }
    GatewayTracing.end(server, errorType);
  }
}
