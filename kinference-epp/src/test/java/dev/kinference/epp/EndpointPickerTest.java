package dev.kinference.epp;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.gateway.GovernanceGuard;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Drives the picker as Envoy does: a gRPC client on a loopback port sends the ext_proc message sequence (request
 * headers, body chunks, response headers, response body) and reads what the picker answers, for OpenAI chat,
 * Anthropic messages and streamed requests, with and without a subset, and bad input.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndpointPickerTest {

  static final String MODEL = "Qwen/Qwen3-8B";

  final List<SimulatedServer> sims = new ArrayList<>();
  @Nullable PolicyGateway pg;
  @Nullable EppServer server;
  @Nullable ManagedChannel channel;

  @BeforeAll
  void start() throws Exception {
    StringBuilder yaml = new StringBuilder("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: local}
        spec:
          model: %s
          endpoints:
        """.formatted(MODEL));
    for (int i = 0; i < 3; i++) {
      SimulatedServer s = SimulatedServer.builder(MODEL).name("sim-" + i).start();
      sims.add(s);
      yaml.append("    - id: sim-").append(i).append("\n      url: ").append(s.baseUri()).append('\n');
    }
    PolicyGateway g = PolicyGateway.builder().config(PolicyLoader.load(yaml.toString(), "pool.yaml").orThrow())
        .build();
    pg = g;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (g.fleet().endpoints().stream().anyMatch(e -> e.health() != Health.HEALTHY)
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    EndpointPicker picker = EndpointPicker.builder().router(g.router())
        .guard(GovernanceGuard.of(g.governance())).tenantHeader("x-tenant").build();
    server = EppServer.start(picker, "127.0.0.1", 0);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
  }

  @AfterAll
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
    if (pg != null) {
      pg.close();
    }
    for (SimulatedServer s : sims) {
      s.close();
    }
  }

  /** One ext_proc stream, as Envoy holds it. */
  final class Call implements StreamObserver<ProcessingResponse> {
    final LinkedBlockingQueue<ProcessingResponse> responses = new LinkedBlockingQueue<>();
    final CountDownLatch done = new CountDownLatch(1);
    final StreamObserver<ProcessingRequest> requests;
    volatile @Nullable Throwable error;

    Call() {
      requests = ExternalProcessorGrpc.newStub(channel).process(this);
    }

    void send(ProcessingRequest r) {
      requests.onNext(r);
    }

    ProcessingResponse next() throws InterruptedException {
      ProcessingResponse r = responses.poll(10, TimeUnit.SECONDS);
      assertThat(r).as("a response from the picker").isNotNull();
      return r;
    }

    void end() throws InterruptedException {
      requests.onCompleted();
      assertThat(done.await(10, TimeUnit.SECONDS)).as("the picker ends the stream").isTrue();
    }

    @Override
    public void onNext(ProcessingResponse value) {
      responses.add(value);
    }

    @Override
    public void onError(Throwable t) {
      error = t;
      done.countDown();
    }

    @Override
    public void onCompleted() {
      done.countDown();
    }
  }

  static ProcessingRequest headers(String path, @Nullable List<String> subset, @Nullable BodySendMode mode,
      boolean endOfStream, String... extra) {
    HeaderMap.Builder h = HeaderMap.newBuilder()
        .addHeaders(HeaderValue.newBuilder().setKey(":method").setRawValue(ByteString.copyFromUtf8("POST")))
        .addHeaders(HeaderValue.newBuilder().setKey(":path").setRawValue(ByteString.copyFromUtf8(path)))
        .addHeaders(HeaderValue.newBuilder().setKey("content-type").setRawValue(
            ByteString.copyFromUtf8("application/json")));
    for (int i = 0; i + 1 < extra.length; i += 2) {
      h.addHeaders(HeaderValue.newBuilder().setKey(extra[i]).setRawValue(ByteString.copyFromUtf8(extra[i + 1])));
    }
    ProcessingRequest.Builder r = ProcessingRequest.newBuilder()
        .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(h).setEndOfStream(endOfStream));
    if (subset != null) {
      ListValue.Builder list = ListValue.newBuilder();
      subset.forEach(s -> list.addValues(Value.newBuilder().setStringValue(s)));
      r.setMetadataContext(Metadata.newBuilder().putFilterMetadata(EndpointPicker.SUBSET_NAMESPACE,
          Struct.newBuilder().putFields(EndpointPicker.SUBSET_KEY, Value.newBuilder().setListValue(list).build())
              .build()));
    }
    if (mode != null) {
      r.setProtocolConfig(ProtocolConfiguration.newBuilder().setRequestBodyMode(mode).setResponseBodyMode(mode));
    }
    return r.build();
  }

  static ProcessingRequest body(String text, boolean endOfStream) {
    return ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
        .setBody(ByteString.copyFromUtf8(text)).setEndOfStream(endOfStream)).build();
  }

  static ProcessingRequest responseHeaders(int status, String contentType) {
    return ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.newBuilder().setHeaders(HeaderMap.newBuilder()
        .addHeaders(HeaderValue.newBuilder().setKey(":status").setRawValue(ByteString.copyFromUtf8("" + status)))
        .addHeaders(HeaderValue.newBuilder().setKey("content-type").setRawValue(
            ByteString.copyFromUtf8(contentType))))).build();
  }

  static ProcessingRequest responseBody(String text, boolean endOfStream) {
    return ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
        .setBody(ByteString.copyFromUtf8(text)).setEndOfStream(endOfStream)).build();
  }

  static String chat(String prompt, boolean stream) {
    return "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
  }

  static String destination(List<HeaderValueOption> set) {
    return set.stream().filter(o -> o.getHeader().getKey().equals(EndpointPicker.DESTINATION))
        .map(o -> o.getHeader().getRawValue().toStringUtf8()).findFirst().orElseThrow();
  }

  static String metadataDestination(ProcessingResponse r) {
    return r.getDynamicMetadata().getFieldsOrThrow(EndpointPicker.LB_NAMESPACE).getStructValue()
        .getFieldsOrThrow(EndpointPicker.DESTINATION).getStringValue();
  }

  List<String> simEndpoints() {
    return sims.stream().map(s -> "127.0.0.1:" + s.port()).toList();
  }

  int inFlight() {
    return java.util.Objects.requireNonNull(pg).fleet().endpoints().stream().mapToInt(EndpointState::inFlight).sum();
  }

  /** Streamed (full duplex) mode: the destination with the headers' answer, then the body given back. */
  String pickStreamed(String path, String body, @Nullable List<String> subset, Call call, String... extraHeaders)
      throws InterruptedException {
    call.send(headers(path, subset, null, false, extraHeaders));
    int half = body.length() / 2;
    call.send(body(body.substring(0, half), false));
    call.send(body(body.substring(half), true));
    ProcessingResponse first = call.next();
    assertThat(first.hasRequestHeaders()).as("%s", first).isTrue();
    String dest = destination(first.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList());
    assertThat(metadataDestination(first)).isEqualTo(dest);
    ProcessingResponse second = call.next();
    assertThat(second.getRequestBody().getResponse().getBodyMutation().getStreamedResponse().getBody()
        .toStringUtf8()).isEqualTo(body);
    assertThat(second.getRequestBody().getResponse().getBodyMutation().getStreamedResponse().getEndOfStream())
        .isTrue();
    return dest;
  }

  @Test
  void openAiChatInStreamedModeGetsTheRoutersEndpointAndFallbacksAndReportsTheResponse() throws Exception {
    Call call = new Call();
    String dest = pickStreamed("/v1/chat/completions", chat("hello there", false), null, call);
    List<String> order = List.of(dest.split(","));
    assertThat(order).isNotEmpty().allSatisfy(e -> assertThat(simEndpoints()).contains(e));
    assertThat(order).doesNotHaveDuplicates();
    assertThat(inFlight()).isEqualTo(1);

    call.send(responseHeaders(200, "application/json"));
    assertThat(call.next().hasResponseHeaders()).isTrue();
    String answer = "{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}";
    call.send(responseBody(answer.substring(0, 20), false));
    call.send(responseBody(answer.substring(20), true));
    ProcessingResponse echoed = call.next();
    assertThat(echoed.getResponseBody().getResponse().getBodyMutation().getStreamedResponse().getBody()
        .toStringUtf8()).as("observed, not modified").isEqualTo(answer.substring(0, 20));
    assertThat(call.next().getResponseBody().getResponse().getBodyMutation().getStreamedResponse().getEndOfStream())
        .isTrue();
    call.end();
    assertThat(inFlight()).as("the router learned the request finished").isZero();
  }

  @Test
  void aSecondRequestWithTheSamePrefixGoesToTheSameEndpoint() throws Exception {
    String prefix = "You are a careful assistant. ".repeat(60);
    Call a = new Call();
    String first = pickStreamed("/v1/chat/completions", chat(prefix + "first question", false), null, a);
    a.send(responseHeaders(200, "application/json"));
    a.next();
    a.send(responseBody("{\"usage\":{\"prompt_tokens\":400,\"completion_tokens\":1}}", true));
    a.next();
    a.end();
    Call b = new Call();
    String second = pickStreamed("/v1/chat/completions", chat(prefix + "second question", false), null, b);
    b.end();
    assertThat(second.split(",")[0]).isEqualTo(first.split(",")[0]);
  }

  @Test
  void requestsWithTheSameAgentSessionHeaderLandTogether() throws Exception {
    for (String header : List.of("x-kinference-session", "x-claude-code-session-id", "session_id")) {
      for (int s = 0; s < 3; s++) {
        String session = header + "-conversation-" + s;
        Call a = new Call();
        String first = pickStreamed("/v1/chat/completions", chat("turn one of " + s, false), null, a,
            header, session);
        a.end();
        Call b = new Call();
        String second = pickStreamed("/v1/chat/completions", chat("an unrelated prompt " + s * 7, false), null, b,
            header, session);
        b.end();
        assertThat(second.split(",")[0]).as("%s: %s", header, session).isEqualTo(first.split(",")[0]);
      }
    }
  }

  @Test
  void responsesApiTurnsThatContinueOneResponseLandTogether() throws Exception {
    for (int s = 0; s < 4; s++) {
      String previous = "resp_conversation_" + s;
      String[] endpoints = new String[2];
      for (int turn = 0; turn < 2; turn++) {
        Call call = new Call();
        String body = "{\"model\":\"" + MODEL + "\",\"max_output_tokens\":8,\"previous_response_id\":\""
            + previous + "\",\"input\":\"turn " + turn + " of conversation " + s + "\"}";
        endpoints[turn] = pickStreamed("/v1/responses", body, null, call).split(",")[0];
        call.end();
      }
      assertThat(endpoints[1]).as("conversation %s", s).isEqualTo(endpoints[0]);
    }
  }

  @Test
  void anthropicMessagesInBufferedMode() throws Exception {
    Call call = new Call();
    call.send(headers("/v1/messages", null, BodySendMode.BUFFERED, false));
    ProcessingResponse h = call.next();
    assertThat(h.hasRequestHeaders()).isTrue();
    assertThat(h.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersCount()).isZero();
    call.send(body("{\"model\":\"" + MODEL + "\",\"max_tokens\":8,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"bonjour\"}]}", true));
    ProcessingResponse b = call.next();
    assertThat(b.hasRequestBody()).isTrue();
    String dest = destination(b.getRequestBody().getResponse().getHeaderMutation().getSetHeadersList());
    assertThat(simEndpoints()).contains(dest.split(",")[0]);
    assertThat(metadataDestination(b)).isEqualTo(dest);
    call.send(responseHeaders(200, "application/json"));
    call.next();
    call.send(responseBody("{\"type\":\"message\",\"usage\":{\"input_tokens\":9,\"output_tokens\":2}}", true));
    assertThat(call.next().hasResponseBody()).isTrue();
    call.end();
    assertThat(inFlight()).isZero();
  }

  @Test
  void aStreamingRequestReportsItsFirstTokenAndUsageFromTheEvents() throws Exception {
    Call call = new Call();
    pickStreamed("/v1/chat/completions", chat("stream me", true), null, call);
    call.send(responseHeaders(200, "text/event-stream"));
    call.next();
    call.send(responseBody("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n", false));
    call.next();
    String last = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}";
    call.send(responseBody(last + "\n\ndata: [DONE]\n\n", true));
    call.next();
    call.end();
    assertThat(inFlight()).isZero();
  }

  @Test
  void withASubsetOnlyItsEndpointsArePicked() throws Exception {
    String only = simEndpoints().get(2);
    for (int i = 0; i < 5; i++) {
      Call call = new Call();
      String dest = pickStreamed("/v1/chat/completions", chat("subset " + i, false), List.of(only), call);
      assertThat(dest).isEqualTo(only);
      call.end();
    }
    Call two = new Call();
    String dest = pickStreamed("/v1/chat/completions", chat("two", false),
        List.of(simEndpoints().get(0), simEndpoints().get(1)), two);
    assertThat(List.of(dest.split(","))).isSubsetOf(simEndpoints().get(0), simEndpoints().get(1));
    two.end();
  }

  @Test
  void theDecisionFollowsTheFallbackThatServed() throws Exception {
    Call call = new Call();
    String dest = pickStreamed("/v1/chat/completions", chat("fallback", false), null, call);
    List<String> order = List.of(dest.split(","));
    assertThat(order).hasSizeGreaterThan(1);
    String served = order.get(1);
    long primaryFailed = state(order.get(0)).failedCount();
    long servedCompleted = state(served).completedCount();
    call.send(responseHeaders(200, "application/json").toBuilder().setMetadataContext(Metadata.newBuilder()
        .putFilterMetadata(EndpointPicker.LB_NAMESPACE, Struct.newBuilder().putFields(EndpointPicker.SERVED_KEY,
            Value.newBuilder().setStringValue(served).build()).build())).build());
    call.next();
    call.send(responseBody("{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}", true));
    call.next();
    call.end();
    assertThat(state(order.get(0)).failedCount()).as("the primary did not serve").isEqualTo(primaryFailed + 1);
    assertThat(state(served).completedCount()).as("the fallback did").isEqualTo(servedCompleted + 1);
    assertThat(inFlight()).isZero();
  }

  EndpointState state(String hostPort) {
    return java.util.Objects.requireNonNull(pg).fleet().endpoints().stream()
        .filter(e -> EndpointPicker.hostPort(e.endpoint()).equals(hostPort)).findFirst().orElseThrow();
  }

  ImmediateResponse refused(Call call) throws InterruptedException {
    ProcessingResponse r = call.next();
    assertThat(r.hasImmediateResponse()).as("%s", r).isTrue();
    call.end();
    return r.getImmediateResponse();
  }

  @Test
  void badInputIsAnsweredAsTheProtocolSaysAndThePickerKeepsServing() throws Exception {
    Call notJson = new Call();
    notJson.send(headers("/v1/chat/completions", null, null, false));
    notJson.send(body("this is not json", true));
    ImmediateResponse r = refused(notJson);
    assertThat(r.getStatus().getCodeValue()).isEqualTo(400);
    assertThat(r.getBody().toStringUtf8()).contains("\"error\"");

    Call unknown = new Call();
    unknown.send(headers("/v1/messages", null, null, false));
    unknown.send(body("{\"model\":\"no-such-model\",\"max_tokens\":8,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", true));
    r = refused(unknown);
    assertThat(r.getStatus().getCodeValue()).isEqualTo(404);
    assertThat(r.getBody().toStringUtf8()).contains("\"type\":\"error\""); // Anthropic's error body

    Call nowhere = new Call();
    nowhere.send(headers("/v1/chat/completions", List.of("10.255.0.1:8000"), null, false));
    nowhere.send(body(chat("nowhere", false), true));
    r = refused(nowhere);
    assertThat(r.getStatus().getCodeValue()).isEqualTo(503);

    Call empty = new Call();
    empty.send(headers("/v1/chat/completions", List.of(), null, false));
    empty.send(body(chat("empty subset", false), true));
    assertThat(refused(empty).getStatus().getCodeValue()).isEqualTo(503);

    Call noBody = new Call();
    noBody.send(headers("/v1/chat/completions", null, null, true));
    assertThat(refused(noBody).getStatus().getCodeValue()).isEqualTo(400);

    Call noBodyMode = new Call();
    noBodyMode.send(headers("/v1/chat/completions", null, BodySendMode.NONE, false));
    assertThat(refused(noBodyMode).getStatus().getCodeValue()).as("a proxy that will not send the body").isEqualTo(500);

    Call early = new Call();
    early.send(headers("/v1/chat/completions", null, null, false));
    early.send(body("{\"model\":", false));
    early.end(); // the stream ends before the body does: nothing routed, nothing answered
    assertThat(early.responses).isEmpty();

    Call cut = new Call();
    pickStreamed("/v1/chat/completions", chat("cut mid-response", true), null, cut);
    cut.send(responseHeaders(200, "text/event-stream"));
    cut.next();
    cut.end(); // the response never finished: the decision is released
    assertThat(inFlight()).isZero();

    Call after = new Call();
    String dest = pickStreamed("/v1/chat/completions", chat("still serving", false), null, after);
    assertThat(simEndpoints()).contains(dest.split(",")[0]);
    after.end();
  }

  @Test
  void healthServiceAnswersForTheServicesTheProtocolNames() {
    var health = HealthGrpc.newBlockingStub(channel);
    for (String service : List.of("", "liveness", "readiness", EppServer.EXT_PROC_SERVICE)) {
      assertThat(health.check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus())
          .as(service).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    }
  }

  @Test
  void usageIsReadFromJsonAndEvents() {
    ResponseObserver json = new ResponseObserver(false);
    json.feed("{\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4,".getBytes(StandardCharsets.UTF_8));
    json.feed("\"prompt_tokens_details\":{\"cached_tokens\":6}}}".getBytes(StandardCharsets.UTF_8));
    assertThat(json.finish()).isEqualTo(new dev.kinference.routing.Usage(10, 6, 4));
    ResponseObserver events = new ResponseObserver(true);
    events.feed(("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
        + "{\"input_tokens\":7,\"output_tokens\":1}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\","
        + "\"usage\":{\"output_").getBytes(StandardCharsets.UTF_8));
    events.feed("tokens\":5}}\n\n".getBytes(StandardCharsets.UTF_8));
    assertThat(events.finish()).isEqualTo(new dev.kinference.routing.Usage(7, 0, 5));
    assertThat(Map.of()).isEmpty();
  }
}
