package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.SLICES;
import static dev.kinference.k8s.K8sObjects.at;
import static dev.kinference.k8s.K8sObjects.pod;
import static dev.kinference.k8s.K8sObjects.slice;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The EndpointSlice source against the fabric8 mock API server in CRUD mode, watching over WebSocket (the mock
 * server's watch transport): what is created, replaced and deleted there reaches the listener as complete sets.
 */
class KubernetesEndpointSourceTest {

  private ApiServerFixture api;
  private KubernetesEndpointSource source;
  private final Deliveries deliveries = new Deliveries();

  @BeforeEach
  void startServer() throws Exception {
    api = new ApiServerFixture();
  }

  @AfterEach
  void stop() throws Exception {
    if (source != null) {
      source.close();
    }
    api.close();
  }

  private KubernetesEndpointSource.Builder sourceBuilder() {
    return KubernetesEndpointSource.builder().config(api.config()).namespace(NS).service("vllm");
  }

  @Test
  void addsUpdatesAndDeletionsArriveAsCompleteSets() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false))));
    // Another service's slice in the same namespace is not ours.
    api.create(SLICES, slice("other-1", "other", Map.of("192.0.2.9", at("vllm-a", true, false))));

    source = sourceBuilder().build();
    source.start(deliveries);
    List<Endpoint> first = deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    Endpoint a = first.get(0);
    assertThat(a.uri()).isEqualTo(URI.create("http://192.0.2.1:8000"));
    assertThat(a.model()).isEqualTo("qwen3");
    assertThat(a.labels()).containsEntry(PodAnnotations.POOL, "qwen3-pool")
        .containsEntry(EndpointLabels.KV_EVENTS, "tcp://192.0.2.1:5557")
        .containsEntry(EndpointLabels.KV_EVENTS_TOPIC, "kv@192.0.2.1:8000@qwen3")
        .containsEntry(PodAnnotations.ZONE_LABEL, "zone-a")
        .containsEntry(PodAnnotations.POD_LABEL, "vllm-a")
        .containsEntry(PodAnnotations.NAMESPACE_LABEL, NS);

    // Add: a new pod joins the slice.
    api.create(PODS, pod("vllm-c", "192.0.2.3", true, "qwen3"));
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false), "192.0.2.3", at("vllm-c", true, false))));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b", "llm/vllm-c");

    // Update: b is no longer ready, a is terminating; both leave.
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", false, true),
        "192.0.2.2", at("vllm-b", false, false), "192.0.2.3", at("vllm-c", true, false))));
    deliveries.awaitIds("llm/vllm-c");

    // Update of the pod: its model annotation changes, so does the endpoint.
    ObjectNode c2 = pod("vllm-c", "192.0.2.3", true, "qwen3-big");
    api.replace(PODS, c2);
    List<Endpoint> changed = deliveries.await("c serving qwen3-big",
        set -> set.size() == 1 && set.get(0).model().equals("qwen3-big"));
    assertThat(changed.get(0).labels()).containsEntry(EndpointLabels.KV_EVENTS_TOPIC,
        "kv@192.0.2.3:8000@qwen3-big");

    // A pod being deleted leaves even before its slice says so.
    ObjectNode deleting = pod("vllm-c", "192.0.2.3", true, "qwen3-big");
    ((ObjectNode) deleting.get("metadata")).put("deletionTimestamp", "2026-01-01T00:00:00Z");
    ((ObjectNode) deleting.get("metadata")).putArray("finalizers").add("test/hold");
    api.replace(PODS, deleting);
    deliveries.await("no endpoints", List::isEmpty);

    // Delete: the slice goes; nothing is left.
    api.replace(PODS, pod("vllm-c", "192.0.2.3", true, "qwen3"));
    deliveries.awaitIds("llm/vllm-c");
    api.delete(SLICES, "vllm-1");
    deliveries.await("no endpoints", List::isEmpty);
    assertThat(source.currentEndpoints()).isEmpty();
  }

  @Test
  void aDroppedConnectionIsReconnectedAndChangesMeanwhileArrive() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
    // fabric8's WebSocket watches on the JDK client do not notice a connection closed under them: the watchdog does
    // (the watch has heard nothing for idleTimeout), here after a second.
    source = sourceBuilder().idleTimeout(Duration.ofSeconds(1)).checkInterval(Duration.ofMillis(200)).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    awaitWatches(2);
    int connections = api.proxy.accepted();

    api.proxy.dropAll();
    // Change the cluster while the source is disconnected (its first retry waits at least 500 ms). The pause lets
    // the mock server forget the dead watches first: it stalls for a minute if it has to send to one.
    Thread.sleep(200);
    api.create(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false))));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");

    // reconnected: by fabric8 itself when it notices the drop, or by the watchdog (a new generation) when it does not
    assertThat(api.proxy.accepted()).isGreaterThan(connections);
    // The endpoints were never withdrawn while the connection was down.
    assertThat(source.currentEndpoints()).extracting(Endpoint::id).containsExactly("llm/vllm-a", "llm/vllm-b");
  }

  /** Waits until the server has seen {@code n} watch requests in all. */
  private void awaitWatches(int n) throws InterruptedException {
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (api.requests.stream().filter(ApiServerFixture::isWatch).count() < n) {
      assertThat(System.nanoTime()).as("%d watches opened", n).isLessThan(deadline);
      Thread.sleep(20);
    }
    Thread.sleep(100); // let the WebSocket handshakes complete
  }

  private void createPodWithoutModel() {
    ObjectNode anonymous = pod("vllm-x", "192.0.2.7", true, "ignored");
    ((ObjectNode) anonymous.get("metadata").get("annotations")).remove(PodAnnotations.MODEL);
    api.create(PODS, anonymous);
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.7", at("vllm-x", true, false))));
  }

  @Test
  void podsWithoutAModelAreSkipped() throws Exception {
    createPodWithoutModel();
    source = sourceBuilder().build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
  }

  @Test
  void podsWithoutAModelServeTheSourcesDefaultModel() throws Exception {
    createPodWithoutModel();
    source = sourceBuilder().defaultModel("qwen3").build();
    source.start(deliveries);
    List<Endpoint> both = deliveries.awaitIds("llm/vllm-a", "llm/vllm-x");
    assertThat(both.get(1).model()).isEqualTo("qwen3");
  }

  @Test
  void withoutPodsEveryReadyAddressServesTheDefaultModel() throws Exception {
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", false, false))));
    source = sourceBuilder().watchPods(false).defaultModel("qwen3").build();
    source.start(deliveries);
    List<Endpoint> set = deliveries.awaitIds("llm/vllm-a");
    assertThat(set.get(0).uri()).isEqualTo(URI.create("http://192.0.2.1:8000"));
    assertThat(api.requestsTo(PODS)).isEmpty();
  }

  @Test
  void podModeRoutesToReadyRunningPodsMatchingTheSelector() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(PODS, pod("vllm-b", "192.0.2.2", false, "qwen3"));
    ObjectNode other = pod("web-1", "192.0.2.5", true, "qwen3");
    ((ObjectNode) other.get("metadata").get("labels")).put("app", "web");
    api.create(PODS, other);

    source = KubernetesEndpointSource.builder().config(api.config()).namespace(NS).podSelector("app=vllm").build();
    source.start(deliveries);
    List<Endpoint> set = deliveries.awaitIds("llm/vllm-a");
    assertThat(set.get(0).uri()).isEqualTo(URI.create("http://192.0.2.1:8000"));

    api.replace(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    api.delete(PODS, "vllm-a");
    deliveries.awaitIds("llm/vllm-b");
  }

  /**
   * Regression: closing sources right after their first delivery, while the mock server still sends the watches'
   * opening events, deadlocked the mock's event loop (see {@link MockWatchDeadlockBreaker}), and closing the server
   * then failed with "Unable to close MockWebServer".
   */
  @Test
  void sourcesClosedWhileTheMockServerSendsLeaveItClosable() throws Exception {
    createPodWithoutModel();
    for (int i = 0; i < 12; i++) {
      Deliveries d = new Deliveries();
      try (KubernetesEndpointSource s = sourceBuilder().build()) {
        s.start(d);
        d.awaitIds("llm/vllm-a");
      }
    }
    api.close(); // throws if the event loop is stuck; closing again in stop() does nothing
  }
}
