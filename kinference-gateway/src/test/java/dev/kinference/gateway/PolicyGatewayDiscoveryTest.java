package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.k8s.PodAnnotations;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.vllm.VllmLabels;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * {@link PolicyGateway} with servers found by discovery and configurations delivered by a feed, the way
 * {@code kinference serve --discovery kubernetes --policy-namespace NS} runs in the Helm chart: discovered servers are
 * served next to configured ones and follow every change of either; a feed's configuration replaces the initial one.
 */
class PolicyGatewayDiscoveryTest {

  static final String MODEL = "Qwen/Qwen3-8B";

  /** An endpoint source whose deliveries the test makes. */
  static final class ManualSource implements EndpointSource {
    final AtomicReference<@Nullable Consumer<List<Endpoint>>> listener = new AtomicReference<>();
    volatile boolean closed;

    @Override
    public String name() {
      return "manual";
    }

    @Override
    public void start(Consumer<List<Endpoint>> l) {
      listener.set(l);
    }

    void deliver(List<Endpoint> endpoints) {
      Consumer<List<Endpoint>> l = listener.get();
      assertThat(l).as("started").isNotNull();
      l.accept(endpoints);
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  static String pool(String name, String id, SimulatedServer s) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: %s}
        spec:
          model: %s
          endpoints:
            - id: %s
              url: %s
        """.formatted(name, MODEL, id, s.baseUri());
  }

  static List<String> ids(PolicyGateway pg) {
    return pg.fleet().endpoints().stream().map(EndpointState::id).sorted().toList();
  }

  static int chat(PolicyGateway pg) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      String body = "{\"model\":\"" + MODEL + "\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      return http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode();
    }
  }

  @Test
  void discoveredServersAreServedBesideConfiguredOnesThroughEveryChange() throws Exception {
    try (SimulatedServer configured = SimulatedServer.builder(MODEL).name("configured").start();
        SimulatedServer found = SimulatedServer.builder(MODEL).name("found").start()) {
      ManualSource source = new ManualSource();
      List<Consumer<PolicyConfig>> feeds = new ArrayList<>();
      boolean[] feedClosed = {false};
      PolicyGateway pg = PolicyGateway.builder()
          .config(PolicyLoader.load(pool("local", "configured", configured), "initial.yaml").orThrow())
          .configFeed(deliver -> {
            feeds.add(deliver);
            return () -> feedClosed[0] = true;
          })
          .discovery(source)
          .gateway(g -> g.port(0).accessLog(false))
          .build().start();
      try {
        assertThat(ids(pg)).containsExactly("configured");
        source.deliver(List.of(new Endpoint("found", found.baseUri(), MODEL, Map.of())));
        assertThat(ids(pg)).containsExactly("configured", "found");
        assertThat(chat(pg)).isEqualTo(200);

        // A new configuration keeps the discovered server; a configured id wins over a discovered one.
        feeds.get(0).accept(PolicyLoader.load(pool("local", "found", configured), "next.yaml").orThrow());
        assertThat(ids(pg)).containsExactly("found");
        assertThat(java.util.Objects.requireNonNull(pg.fleet().get("found")).endpoint().uri()).isEqualTo(configured.baseUri());

        feeds.get(0).accept(PolicyConfig.EMPTY);
        assertThat(ids(pg)).containsExactly("found");
        assertThat(java.util.Objects.requireNonNull(pg.fleet().get("found")).endpoint().uri()).isEqualTo(found.baseUri());
        assertThat(chat(pg)).as("an empty configuration serves every discovered model").isEqualTo(200);

        source.deliver(List.of());
        assertThat(ids(pg)).isEmpty();
      } finally {
        pg.close();
      }
      assertThat(source.closed).isTrue();
      assertThat(feedClosed[0]).isTrue();
    }
  }

  @Test
  void aDiscoveryThatCannotStartFailsTheBuildAndLeavesNothingRunning() {
    boolean[] feedClosed = {false};
    EndpointSource noCluster = new EndpointSource() {
      @Override
      public String name() {
        return "no-cluster";
      }

      @Override
      public void start(Consumer<List<Endpoint>> listener) {
        throw new IllegalStateException("no Kubernetes API server: KUBERNETES_SERVICE_HOST unset, no kubeconfig");
      }

      @Override
      public void close() {}
    };
    assertThatThrownBy(() -> PolicyGateway.builder()
        .configFeed(deliver -> () -> feedClosed[0] = true)
        .discovery(noCluster)
        .gateway(g -> g.port(0).accessLog(false))
        .build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no Kubernetes API server");
    assertThat(feedClosed[0]).as("the configuration feed was closed again").isTrue();
  }

  @Test
  void kubernetesDiscoveryLabelsAreTheOnesTheVllmModuleReads() {
    // Regression: discovery labelled KV-event addresses "kinference.dev/kv-events", which no subscriber read. Both
    // sides now take the names from EndpointLabels; the pod annotation keeps its shorter name.
    assertThat(VllmLabels.KV_EVENTS).isEqualTo(EndpointLabels.KV_EVENTS).isNotEqualTo(PodAnnotations.KV_EVENTS);
    assertThat(VllmLabels.KV_EVENTS_REPLAY).isEqualTo(EndpointLabels.KV_EVENTS_REPLAY)
        .isNotEqualTo(PodAnnotations.KV_EVENTS_REPLAY);
    assertThat(VllmLabels.KV_EVENTS_TOPIC).isEqualTo(EndpointLabels.KV_EVENTS_TOPIC);
    assertThat(VllmLabels.METRICS_URI).isEqualTo(EndpointLabels.METRICS_URI);
  }
}
