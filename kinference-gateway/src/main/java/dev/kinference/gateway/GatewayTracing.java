package dev.kinference.gateway;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's traces through the OpenTelemetry API: a server span per inference request, parented on the client's
 * W3C {@code traceparent}, and the propagation of the current span to local servers. With the no-op API (no SDK
 * configured) every method returns {@link Span#getInvalid()} at once, so the request path builds no attributes.
 * Thread-safe.
 *
 * <p>The API is OpenTelemetry's own (a maintained library, the one tracing backends expect); the SDK is built by
 * its autoconfiguration module from the standard {@code OTEL_*} variables ({@link #fromEnvironment}).
 */
final class GatewayTracing implements AutoCloseable {

  static final String INSTRUMENTATION = "dev.kinference.gateway";
  /** The variables any one of which turns tracing on: the exporter, or where OTLP goes. */
  static final List<String> TRIGGERS = List.of("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");

  private static final TextMapGetter<HttpFields> HEADERS = new TextMapGetter<>() {
    @Override
    @SuppressWarnings("deprecation") // the interface's, still abstract: W3C extraction reads get() only
    public Iterable<String> keys(HttpFields carrier) {
      return carrier.getFieldNamesCollection();
    }

    @Override
    public @Nullable String get(@Nullable HttpFields carrier, String key) {
      if (carrier == null) {
        return null;
      }
      HttpField f = carrier.getField(key);
      return f == null ? null : f.getValue();
    }
  };

  private final boolean enabled;
  private final Tracer tracer;
  private final TextMapPropagator propagator;
  private final @Nullable OpenTelemetrySdk owned;

  GatewayTracing(OpenTelemetry otel) {
    this(otel, null);
  }

  @SuppressWarnings("ReferenceEquality") // the API's no-op is one instance: being it is what "no SDK" means
  private GatewayTracing(OpenTelemetry otel, @Nullable OpenTelemetrySdk owned) {
    this.enabled = otel != OpenTelemetry.noop();
    this.tracer = otel.getTracer(INSTRUMENTATION, BuildInfo.version());
    this.propagator = otel.getPropagators().getTextMapPropagator();
    this.owned = owned;
  }

  /** The caller's OpenTelemetry, or when null, {@link #fromEnvironment} of the process's environment. */
  static GatewayTracing of(@Nullable OpenTelemetry given) {
    return given != null ? new GatewayTracing(given) : fromEnvironment(System.getenv());
  }

  /**
   * An SDK configured from the environment when one of {@link #TRIGGERS} is set (the gateway then owns it and shuts
   * it down on close), else the no-op API. Only traces are exported: metrics stay on {@code /metrics} and logs in
   * the log, unless {@code OTEL_METRICS_EXPORTER} or {@code OTEL_LOGS_EXPORTER} say otherwise.
   *
   * @throws IllegalArgumentException if the variables do not make a valid configuration (say, an unknown exporter)
   */
  static GatewayTracing fromEnvironment(Map<String, String> env) {
    if (TRIGGERS.stream().noneMatch(env::containsKey)) {
      return new GatewayTracing(OpenTelemetry.noop());
    }
    try {
      OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
          .addPropertiesSupplier(() -> Map.of("otel.metrics.exporter", "none", "otel.logs.exporter", "none",
              "otel.service.name", "kinference-gateway",
              // the jar carries the HTTP exporter only (over the JDK's client): the specification's default protocol
              "otel.exporter.otlp.protocol", "http/protobuf"))
          .build().getOpenTelemetrySdk();
      return new GatewayTracing(sdk, sdk);
    } catch (ConfigurationException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new IllegalArgumentException("OpenTelemetry could not be configured from the OTEL_* variables: "
          + cause.getMessage() + " (the gateway exports traces over OTLP http/protobuf; grpc is not included)", e);
    }
  }

  boolean enabled() {
    return enabled;
  }

  /** The span of one request the gateway serves, child of the client's {@code traceparent} if it sent one. */
  Span serverSpan(String name, HttpFields requestHeaders) {
    if (!enabled) {
      return Span.getInvalid();
    }
    Context parent = propagator.extract(Context.root(), requestHeaders, HEADERS);
    return tracer.spanBuilder(name).setSpanKind(SpanKind.SERVER).setParent(parent).startSpan();
  }

  /** A span under {@code parent}. */
  Span child(Span parent, String name, SpanKind kind) {
    if (!enabled || !parent.getSpanContext().isValid()) {
      return Span.getInvalid();
    }
    return tracer.spanBuilder(name).setSpanKind(kind).setParent(Context.root().with(parent)).startSpan();
  }

  /** Writes {@code span}'s context into an outgoing request's headers ({@code traceparent}, {@code tracestate}). */
  void inject(Span span, BiConsumer<String, String> header) {
    if (enabled && span.getSpanContext().isValid()) {
      propagator.inject(Context.root().with(span), header, (h, k, v) -> {
        if (h != null) {
          h.accept(k, v);
        }
      });
    }
  }

  /** Ends {@code span}, marking it failed with {@code error.type} when {@code errorType} is not null. */
  static void end(Span span, @Nullable String errorType) {
    if (errorType != null && span.isRecording()) {
      span.setAttribute("error.type", errorType);
      span.setStatus(StatusCode.ERROR, errorType);
    }
    span.end();
  }

  @Override
  public void close() {
    OpenTelemetrySdk sdk = owned;
    if (sdk != null) {
      sdk.close();
    }
  }
}
