package dev.kinference.gateway;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The recording phase of an inference request: its metrics and its access-log line, written once when it ends.
 * Thread-safe (the metrics are lock-free, the log is SLF4J's).
 */
final class RequestRecorder {

  private static final Logger accessLog = LoggerFactory.getLogger("dev.kinference.gateway.access");

  /**
   * What one finished inference request leaves behind.
   *
   * @param request the parsed request, null if it ended before parsing
   * @param operation its {@code gen_ai.operation.name} ({@link GenAiNames})
   * @param endpoint the endpoint that served (or last refused) it, null if none did
   * @param firstByteNanos when its answer's first content went out, 0 if none did
   */
  record Outcome(String method, String path, String tenant, @Nullable InferenceRequest request, String operation,
      @Nullable Endpoint endpoint, int status, int attempts, Usage usage, double cost, @Nullable String errorType,
      long arrivalNanos, long firstByteNanos, long endNanos) {

    String model() {
      InferenceRequest r = request;
      return r == null ? "-" : r.model();
    }

    /** The GenAI label values in {@link GatewayMetrics#GEN_AI_LABELS}' order, then {@code last}. */
    String[] genAiLabels(String last) {
      return new String[] {tenant, operation, GenAiNames.provider(endpoint), model(),
          GenAiNames.responseModel(endpoint), endpointId(), last};
    }

    String[] genAiLabels() {
      return java.util.Arrays.copyOf(genAiLabels(""), GatewayMetrics.GEN_AI_LABELS.length);
    }

    String endpointId() {
      Endpoint e = endpoint;
      return e == null ? "-" : e.id();
    }

    boolean stream() {
      InferenceRequest r = request;
      return r != null && r.stream();
    }

    double seconds() {
      return (endNanos - arrivalNanos) * 1e-9;
    }

    /** Seconds to the first content of a stream, or -1. */
    double ttft() {
      return firstByteNanos != 0 && stream() ? (firstByteNanos - arrivalNanos) * 1e-9 : -1;
    }
  }

  private final GatewayMetrics metrics;
  private final boolean logAccess;

  RequestRecorder(GatewayMetrics metrics, boolean logAccess) {
    this.metrics = metrics;
    this.logAccess = logAccess;
  }

  /** An inference request ended: every metric and its access-log line. */
  void record(Outcome o) {
    recordMetrics(o);
    logAccess(o, o.model());
  }

  /**
   * A pooling or tokenizer request ended ({@link Pooling}, which counts its requests, errors and tokens itself): its
   * duration and its access-log line.
   */
  void recordPooling(Outcome o, String model) {
    String errorType = o.errorType();
    String[] labels = o.genAiLabels(errorType == null ? "" : errorType);
    labels[3] = model; // pooling requests have no InferenceRequest: the model is the body's
    metrics.duration.observe(o.seconds(), labels);
    logAccess(o, model);
  }

  /** One upstream attempt ended: {@code gen_ai.client.operation.duration}. */
  void recordAttempt(String operation, Endpoint endpoint, String requestModel, double seconds,
      @Nullable String errorType) {
    metrics.operationDuration.observe(seconds, operation, GenAiNames.provider(endpoint), requestModel,
        GenAiNames.responseModel(endpoint), endpoint.id(), endpoint.uri().getHost() == null ? ""
            : endpoint.uri().getHost(), errorType == null ? "" : errorType);
  }

  private void logAccess(Outcome o, String model) {
    if (logAccess && accessLog.isInfoEnabled()) {
      double ttft = o.ttft();
      Usage usage = o.usage();
      accessLog.info(String.format(Locale.ROOT,
          "%s %s tenant=%s model=%s endpoint=%s status=%d stream=%s attempts=%d input=%d cached=%d output=%d "
              + "ttft_ms=%s duration_ms=%.1f cost=%.6f%s",
          o.method(), o.path(), o.tenant(), model, o.endpointId(), o.status(), o.stream(), o.attempts(),
          usage.promptTokens(), usage.cachedPromptTokens(), usage.completionTokens(),
          ttft < 0 ? "-" : String.format(Locale.ROOT, "%.1f", ttft * 1e3), o.seconds() * 1e3, o.cost(),
          o.errorType() == null ? "" : " error=" + o.errorType()));
    }
  }

  private void recordMetrics(Outcome o) {
    String tenant = o.tenant();
    String model = o.model();
    String endpointId = o.endpointId();
    String errorType = o.errorType();
    Usage usage = o.usage();
    GatewayMetrics m = metrics;
    m.requests.inc(tenant, model, endpointId, Integer.toString(o.status()));
    if (errorType != null) {
      m.errors.inc(tenant, model, endpointId, errorType);
    }
    m.duration.observe(o.seconds(), o.genAiLabels(errorType == null ? "" : errorType));
    if (o.endpoint() != null && usage.promptTokens() + usage.completionTokens() > 0) {
      m.tokens.add(usage.promptTokens(), tenant, model, endpointId, "input");
      m.tokens.add(usage.cachedPromptTokens(), tenant, model, endpointId, "cached");
      m.tokens.add(usage.completionTokens(), tenant, model, endpointId, "output");
      m.tokenUsage.observe(usage.promptTokens(), o.genAiLabels("input"));
      m.tokenUsage.observe(usage.completionTokens(), o.genAiLabels("output"));
      m.cost.add(o.cost(), tenant, model, endpointId);
    }
    double ttft = o.ttft();
    if (ttft >= 0 && errorType == null) { // the conventions count successful responses only
      String[] labels = o.genAiLabels();
      m.ttft.observe(ttft, labels);
      if (usage.completionTokens() > 1) {
        m.timePerOutputToken.observe((o.endNanos() - o.firstByteNanos()) * 1e-9 / (usage.completionTokens() - 1),
            labels);
      }
    }
  }
}
