package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.routing.Router;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Traces through the OpenTelemetry SDK with its in-memory exporter: a streamed and a failed request each give a
 * server span parented on the client's {@code traceparent}, with admission, routing and attempt spans under it and
 * the GenAI attributes; the upstream, a loopback HTTP server speaking vLLM's stream format, receives a
 * {@code traceparent} of the same trace whose parent is the attempt's span.
 */
class TracingTest {

  static final String CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String CLIENT_SPAN = "00f067aa0ba902b7";
  static final InMemorySpanExporter spans = InMemorySpanExporter.create();
  /** traceparent received by the upstream, by the request's first user message. */
  static final Map<String, String> received = new ConcurrentHashMap<>();
  static Server upstream;
  static OpenTelemetrySdk sdk;
  static Gateway gateway;
  static int upstreamPort;

  @BeforeAll
  static void start() throws Exception {
    upstream = new Server();
    ServerConnector c = new ServerConnector(upstream);
    c.setHost("127.0.0.1");
    c.setPort(0);
    upstream.addConnector(c);
    upstream.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String body = Content.Source.asString(request, StandardCharsets.UTF_8);
        String tag = body.contains("please fail") ? "fail" : "ok";
        String traceparent = request.getHeaders().get("traceparent");
        received.put(tag, traceparent == null ? "none" : traceparent);
        if (tag.equals("fail")) {
          Response.writeError(request, response, callback, 503, "overloaded");
          return true;
        }
        StringBuilder sse = new StringBuilder();
        String head = "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"delta\":";
        for (int i = 0; i < 3; i++) {
          sse.append("data: ").append(head).append("{\"content\":\"w").append(i)
              .append(" \"},\"finish_reason\":null}]}\n\n");
        }
        sse.append("data: ").append(head).append("{},\"finish_reason\":\"stop\"}]}\n\n");
        sse.append("data: [DONE]\n\n");
        response.setStatus(200);
        response.getHeaders().put("content-type", "text/event-stream");
        response.write(true, ByteBuffer.wrap(sse.toString().getBytes(StandardCharsets.UTF_8)), callback);
        return true;
      }
    });
    upstream.start();
    upstreamPort = c.getLocalPort();
    sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
    Fleet fleet = Fleet.of(List.of(Endpoint.of("up", "http://127.0.0.1:" + c.getLocalPort(), "m")));
    gateway = Gateway.builder().router(Router.builder().fleet(fleet).build()).port(0).host("127.0.0.1")
        .openTelemetry(sdk).build().start();
  }

  @AfterAll
  static void stop() throws Exception {
    gateway.close();
    upstream.stop();
    sdk.close();
  }

  @BeforeEach
  void clear() {
    spans.reset();
  }

  @Test
  void aStreamedRequestIsOneTraceFromTheClientToTheUpstream() throws Exception {
    HttpResponse<String> r = post("hello", true);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("[DONE]");
    Harness.awaitEveryRequestRecorded(gateway);

    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getName()).isEqualTo("chat m");
    assertThat(server.getTraceId()).as("the client's trace").isEqualTo(CLIENT_TRACE);
    assertThat(server.getParentSpanId()).as("the client's span is the parent").isEqualTo(CLIENT_SPAN);
    assertThat(server.getAttributes().get(AttributeKey.stringKey("gen_ai.operation.name"))).isEqualTo("chat");
    assertThat(server.getAttributes().get(AttributeKey.stringKey("gen_ai.request.model"))).isEqualTo("m");
    assertThat(server.getAttributes().get(AttributeKey.stringKey("gen_ai.provider.name"))).isEqualTo("vllm");
    assertThat(server.getAttributes().get(AttributeKey.longKey("http.response.status_code"))).isEqualTo(200L);
    assertThat(server.getAttributes().get(AttributeKey.longKey("gen_ai.usage.output_tokens"))).isEqualTo(3L);
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);

    assertThat(children(server)).extracting(SpanData::getName)
        .containsExactlyInAnyOrder("admission", "routing", "chat m");
    SpanData routing = named("routing");
    assertThat(routing.getAttributes().get(AttributeKey.stringKey("kinference.routing.endpoint"))).isEqualTo("up");
    assertThat(routing.getAttributes().get(AttributeKey.stringKey("kinference.routing.reason"))).isEqualTo("load");
    assertThat(routing.getAttributes().get(AttributeKey.stringKey("kinference.routing.outcome")))
        .isEqualTo("dispatched");
    assertThat(routing.getAttributes().get(AttributeKey.stringKey("kinference.routing.explain"))).startsWith("up ");

    SpanData attempt = only(SpanKind.CLIENT);
    assertThat(attempt.getParentSpanId()).isEqualTo(server.getSpanId());
    assertThat(attempt.getAttributes().get(AttributeKey.stringKey("gen_ai.provider.name"))).isEqualTo("vllm");
    assertThat(attempt.getAttributes().get(AttributeKey.stringKey("gen_ai.response.model"))).isEqualTo("m");
    assertThat(attempt.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo("127.0.0.1");
    assertThat(attempt.getEvents()).extracting(e -> e.getName()).containsExactly("gen_ai.first_token");
    assertThat(attempt.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);

    assertThat(received.get("ok")).as("the upstream continues the trace under the attempt's span")
        .isEqualTo("00-" + CLIENT_TRACE + "-" + attempt.getSpanId() + "-01");
  }

  @Test
  void aFailedRequestEndsItsSpansWithErrorType() throws Exception {
    HttpResponse<String> r = post("please fail", false);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
    Harness.awaitEveryRequestRecorded(gateway);

    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getTraceId()).isEqualTo(CLIENT_TRACE);
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(server.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("upstream");
    assertThat(server.getAttributes().get(AttributeKey.longKey("http.response.status_code"))).isEqualTo(503L);

    SpanData attempt = only(SpanKind.CLIENT);
    assertThat(attempt.getParentSpanId()).isEqualTo(server.getSpanId());
    assertThat(attempt.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(attempt.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("status_503");
    assertThat(attempt.getEvents()).as("no first token").isEmpty();
    assertThat(children(server)).extracting(SpanData::getName).contains("admission", "routing", "chat m");
    assertThat(received.get("fail")).isEqualTo("00-" + CLIENT_TRACE + "-" + attempt.getSpanId() + "-01");
  }

  @Test
  void aRequestThatWaitedInTheQueueHasAQueueSpanBetweenItsTwoRoutings() throws Exception {
    Fleet fleet = Fleet.of(List.of(Endpoint.of("up", "http://127.0.0.1:" + upstreamPort, "m")));
    EndpointState up = java.util.Objects.requireNonNull(fleet.get("up"));
    up.updateMetrics(EndpointMetrics.of(0, 0, 0.99, System.nanoTime())); // KV cache full: saturated
    try (Gateway queueing = Gateway.builder().router(Router.builder().fleet(fleet).build()).port(0)
        .host("127.0.0.1").openTelemetry(sdk).build().start()) {
      CompletableFuture<HttpResponse<String>> answer = CompletableFuture.supplyAsync(() -> {
        try {
          return post(queueing, "queued please", true);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      StreamFailureTest.awaitTrue(() -> queueing.queuedRequests() == 1, "the request waits in the queue");
      up.updateMetrics(EndpointMetrics.of(0, 0, 0.1, System.nanoTime()));
      assertThat(answer.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      Harness.awaitEveryRequestRecorded(queueing);
    }
    SpanData server = only(SpanKind.SERVER);
    assertThat(children(server)).extracting(SpanData::getName)
        .containsExactlyInAnyOrder("admission", "routing", "queue", "routing", "chat m");
    SpanData queue = named("queue");
    assertThat(queue.getAttributes().get(AttributeKey.stringKey("kinference.queue.outcome"))).isEqualTo("dispatched");
    assertThat(children(server)).filteredOn(s -> s.getName().equals("routing"))
        .extracting(s -> s.getAttributes().get(AttributeKey.stringKey("kinference.routing.outcome")))
        .containsExactlyInAnyOrder("queued", "dispatched");
    SpanData attempt = only(SpanKind.CLIENT);
    assertThat(attempt.getStartEpochNanos()).as("sent after the wait").isGreaterThanOrEqualTo(queue.getEndEpochNanos());
  }

  @Test
  void anEmbeddingsRequestIsTracedAndItsUpstreamContinuesTheTrace() throws Exception {
    HttpResponse<String> r;
    try (HttpClient http = HttpClient.newHttpClient()) {
      r = http.send(HttpRequest.newBuilder(URI.create(gateway.uri() + "/v1/embeddings"))
          .header("Content-Type", "application/json")
          .header("traceparent", "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"input\":\"please fail\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
    }
    assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
    Harness.awaitEveryRequestRecorded(gateway);
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getName()).isEqualTo("embeddings");
    assertThat(server.getTraceId()).isEqualTo(CLIENT_TRACE);
    assertThat(server.getParentSpanId()).isEqualTo(CLIENT_SPAN);
    assertThat(server.getAttributes().get(AttributeKey.stringKey("gen_ai.request.model"))).isEqualTo("m");
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    SpanData attempt = only(SpanKind.CLIENT);
    assertThat(attempt.getName()).isEqualTo("embeddings m");
    assertThat(attempt.getParentSpanId()).isEqualTo(server.getSpanId());
    assertThat(attempt.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("503");
    assertThat(received.get("fail")).isEqualTo("00-" + CLIENT_TRACE + "-" + attempt.getSpanId() + "-01");
  }

  @Test
  void withoutAnSdkNothingIsTracedOrPropagated() {
    GatewayTracing noop = GatewayTracing.fromEnvironment(Map.of());
    assertThat(noop.enabled()).isFalse();
    assertThat(noop.serverSpan("chat", org.eclipse.jetty.http.HttpFields.EMPTY).getSpanContext().isValid())
        .isFalse();
  }

  @Test
  void otelVariablesBuildAnSdkAndABadOneIsAClearError() {
    System.setProperty("otel.traces.exporter", "none");
    try (GatewayTracing configured = GatewayTracing.fromEnvironment(Map.of("OTEL_TRACES_EXPORTER", "none"))) {
      assertThat(configured.enabled()).as("an SDK, exporting nowhere").isTrue();
    } finally {
      System.clearProperty("otel.traces.exporter");
    }
    System.setProperty("otel.traces.exporter", "no-such-exporter");
    try {
      assertThatThrownBy(() -> GatewayTracing.fromEnvironment(Map.of("OTEL_TRACES_EXPORTER", "no-such-exporter")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("OpenTelemetry could not be configured from the OTEL_* variables")
          .hasMessageContaining("no-such-exporter");
    } finally {
      System.clearProperty("otel.traces.exporter");
    }
  }

  private static HttpResponse<String> post(String content, boolean stream) throws Exception {
    return post(gateway, content, stream);
  }

  private static HttpResponse<String> post(Gateway to, String content, boolean stream) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(HttpRequest.newBuilder(URI.create(to.uri() + "/v1/chat/completions"))
          .header("Content-Type", "application/json")
          .header("traceparent", "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":" + stream + ",\"max_tokens\":10,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }

  private static SpanData only(SpanKind kind) {
    List<SpanData> all = spans.getFinishedSpanItems().stream().filter(s -> s.getKind() == kind).toList();
    assertThat(all).as(kind + " spans in " + spans.getFinishedSpanItems()).hasSize(1);
    return all.get(0);
  }

  private static SpanData named(String name) {
    return spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
  }

  private static List<SpanData> children(SpanData parent) {
    return spans.getFinishedSpanItems().stream().filter(s -> s.getParentSpanId().equals(parent.getSpanId()))
        .toList();
  }
}
