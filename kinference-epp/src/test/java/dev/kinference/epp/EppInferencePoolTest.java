package dev.kinference.epp;

import static dev.kinference.epp.EndpointPickerTest.body;
import static dev.kinference.epp.EndpointPickerTest.destination;
import static dev.kinference.epp.EndpointPickerTest.headers;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.gateway.GovernanceGuard;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.k8s.InferencePoolSource;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.sim.server.SimulatedServer;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kinference epp --inference-pool llm/qwen3} end to end on fabric8's mock API server (CRUD mode): an
 * InferencePool ({@code inference.networking.k8s.io/v1}) and its pods are created, made unready, re-targeted and
 * deleted, and the picker's answers (Envoy's ext_proc stream) follow within a second each. The pods' address is
 * 127.0.0.1 and the pool's target port a simulated vLLM's.
 */
class EppInferencePoolTest {

  static final String MODEL = EndpointPickerTest.MODEL;
  static final String NS = "llm";
  static final String PODS = "/api/v1/namespaces/" + NS + "/pods";
  static final String POOLS = "/apis/inference.networking.k8s.io/v1/namespaces/" + NS + "/inferencepools";
  static final ObjectMapper JSON = new ObjectMapper();
  static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final KubernetesMockServer api = new KubernetesMockServer(new Context(), new MockWebServer(),
      new HashMap<>(), new KubernetesCrudDispatcher(), false);
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private @Nullable SimulatedServer sim1;
  private @Nullable SimulatedServer sim2;
  private @Nullable PolicyGateway pg;
  private @Nullable EppServer server;
  private @Nullable ManagedChannel channel;

  @AfterEach
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
    for (SimulatedServer s : new SimulatedServer[] {sim1, sim2}) {
      if (s != null) {
        s.close();
      }
    }
    try {
      api.shutdown();
    } catch (RuntimeException e) {
      // the mock server's own shutdown can time out on closed watches; nothing of ours is left running
    }
    http.close();
  }

  @Test
  void picksFollowThePoolsPodsAndPortsWithinASecond() throws Exception {
    SimulatedServer s1 = SimulatedServer.builder(MODEL).name("sim-1").start();
    sim1 = s1;
    SimulatedServer s2 = SimulatedServer.builder(MODEL).name("sim-2").start();
    sim2 = s2;
    api.start(InetAddress.getLoopbackAddress(), 0);
    send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd());
    send("POST", POOLS, pool(s1.port()));
    send("POST", PODS, pod("vllm-a", true));

    Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + api.getPort())
        .withOauthToken("test-token").withWatchReconnectInterval(50).withWatchReconnectLimit(-1)
        .withRequestTimeout(5_000).withConnectionTimeout(2_000).build();
    InferencePoolSource source = InferencePoolSource.builder().config(config).pool(NS + "/qwen3").build();
    PolicyGateway g = PolicyGateway.builder().discovery(source).config(PolicyConfig.EMPTY).build();
    pg = g;
    EndpointPicker picker = EndpointPicker.builder().router(g.router()).guard(GovernanceGuard.of(g.governance()))
        .build();
    server = EppServer.start(picker, "127.0.0.1", 0);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", Objects.requireNonNull(server).port()).usePlaintext()
        .build();
    String at1 = "127.0.0.1:" + s1.port();
    String at2 = "127.0.0.1:" + s2.port();
    awaitPick(System.nanoTime(), at1, 20 * SECOND);

    // Made unready: no endpoint left, the picker refuses.
    long t = System.nanoTime();
    send("PUT", PODS + "/vllm-a", pod("vllm-a", false));
    awaitPick(t, null, SECOND);

    // Added: another ready pod.
    t = System.nanoTime();
    send("POST", PODS, pod("vllm-b", true));
    awaitPick(t, at1, SECOND);
    assertThat(g.fleet().endpoints()).extracting(e -> e.endpoint().id()).containsExactly("llm/vllm-b");

    // The pool's target port changes: the picks go to the other server.
    t = System.nanoTime();
    send("PUT", POOLS + "/qwen3", pool(s2.port()));
    awaitPick(t, at2, SECOND);

    // Removed: nothing to pick.
    t = System.nanoTime();
    send("DELETE", PODS + "/vllm-b", null);
    awaitPick(t, null, SECOND);
  }

  /** Picks until the answer is {@code want} (null: a refusal), failing if that takes {@code limit} from {@code t}. */
  private void awaitPick(long t, @Nullable String want, long limit) throws InterruptedException {
    String last = "(none)";
    while (System.nanoTime() - t < limit) {
      String got = pick();
      if (Objects.equals(got, want)) {
        return;
      }
      last = String.valueOf(got);
      Thread.sleep(20);
    }
    throw new AssertionError("no pick of " + want + " within " + TimeUnit.NANOSECONDS.toMillis(limit)
        + " ms; last " + last);
  }

  /** One request through the picker: its destination, or null when it answered with an immediate response. */
  private @Nullable String pick() throws InterruptedException {
    LinkedBlockingQueue<ProcessingResponse> responses = new LinkedBlockingQueue<>();
    StreamObserver<ProcessingRequest> requests = ExternalProcessorGrpc.newStub(channel).process(
        new StreamObserver<>() {
          @Override
          public void onNext(ProcessingResponse value) {
            responses.add(value);
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    String chat = "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    requests.onNext(headers("/v1/chat/completions", null, null, false));
    requests.onNext(body(chat, true));
    ProcessingResponse first = responses.poll(10, TimeUnit.SECONDS);
    assertThat(first).as("an answer from the picker").isNotNull();
    requests.onCompleted();
    if (first.hasImmediateResponse()) {
      return null;
    }
    return destination(first.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList());
  }

  private void send(String method, String path, @Nullable ObjectNode body) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.getPort() + path))
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s %s: %s", method, path, r.body()).isBetween(200, 201);
  }

  static ObjectNode crd() {
    ObjectNode crd = JSON.createObjectNode();
    crd.put("apiVersion", "apiextensions.k8s.io/v1");
    crd.put("kind", "CustomResourceDefinition");
    crd.putObject("metadata").put("name", "inferencepools.inference.networking.k8s.io");
    ObjectNode spec = crd.putObject("spec");
    spec.put("group", "inference.networking.k8s.io");
    spec.put("scope", "Namespaced");
    spec.putObject("names").put("kind", "InferencePool").put("plural", "inferencepools")
        .put("singular", "inferencepool").put("listKind", "InferencePoolList");
    spec.putArray("versions").addObject().put("name", "v1").put("served", true).put("storage", true);
    return crd;
  }

  static ObjectNode pool(int port) {
    ObjectNode p = JSON.createObjectNode();
    p.put("apiVersion", "inference.networking.k8s.io/v1");
    p.put("kind", "InferencePool");
    p.putObject("metadata").put("name", "qwen3").put("namespace", NS);
    ObjectNode spec = p.putObject("spec");
    spec.putObject("selector").putObject("matchLabels").put("app", "vllm-qwen3");
    spec.putArray("targetPorts").addObject().put("number", port);
    spec.putObject("endpointPickerRef").put("name", "kinference-epp").putObject("port").put("number", 9002);
    return p;
  }

  static ObjectNode pod(String name, boolean ready) {
    ObjectNode pod = JSON.createObjectNode();
    pod.put("apiVersion", "v1");
    pod.put("kind", "Pod");
    ObjectNode meta = pod.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", NS);
    meta.putObject("labels").put("app", "vllm-qwen3");
    meta.putObject("annotations").put("kinference.dev/model", MODEL);
    ObjectNode container = pod.putObject("spec").putArray("containers").addObject();
    container.put("name", "vllm");
    container.put("image", "vllm/vllm-openai");
    ObjectNode status = pod.putObject("status");
    status.put("phase", "Running");
    status.put("podIP", "127.0.0.1");
    ArrayNode conditions = status.putArray("conditions");
    conditions.addObject().put("type", "Ready").put("status", ready ? "True" : "False");
    return pod;
  }
}
