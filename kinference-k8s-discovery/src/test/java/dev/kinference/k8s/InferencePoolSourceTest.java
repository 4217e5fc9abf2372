package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import java.net.URI;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Gateway API Inference Extension's InferencePool ({@code inference.networking.k8s.io/v1}) on the fabric8 mock
 * API server in CRUD mode: pods added, made unready and removed, and the pool's selector and ports changed, reach
 * the listener from the watch (well before a relist would bring them).
 */
class InferencePoolSourceTest {

  static final String POOLS = "/apis/inference.networking.k8s.io/v1/namespaces/" + NS + "/inferencepools";
  /**
   * How soon a change must arrive: from the watch, well inside the two-minute relist that would otherwise bring it
   * (ClusterConnection). Not the sub-second latency itself: a timed bound that tight failed on a loaded 2-core CI
   * machine (1.6 s), and latency targets belong in benchmarks, not unit tests.
   */
  private static final long PROMPTLY = TimeUnit.SECONDS.toNanos(10);

  private ApiServerFixture api;
  private InferencePoolSource source;
  private final Deliveries deliveries = new Deliveries();

  @BeforeEach
  void startServer() throws Exception {
    api = new ApiServerFixture();
    api.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd());
  }

  @AfterEach
  void stop() throws Exception {
    if (source != null) {
      source.close();
    }
    api.close();
  }

  /** The InferencePool CRD as far as the mock server needs it (group, names, scope, version). */
  static ObjectNode crd() {
    ObjectNode crd = EndpointMapper.JSON.createObjectNode();
    crd.put("apiVersion", "apiextensions.k8s.io/v1");
    crd.put("kind", "CustomResourceDefinition");
    crd.putObject("metadata").put("name", "inferencepools.inference.networking.k8s.io");
    ObjectNode spec = crd.putObject("spec");
    spec.put("group", "inference.networking.k8s.io");
    spec.put("scope", "Namespaced");
    spec.putObject("names").put("kind", "InferencePool").put("plural", "inferencepools")
        .put("singular", "inferencepool").put("listKind", "InferencePoolList");
    ObjectNode v = spec.putArray("versions").addObject();
    v.put("name", "v1").put("served", true).put("storage", true);
    v.putObject("schema").putObject("openAPIV3Schema").put("type", "object")
        .put("x-kubernetes-preserve-unknown-fields", true);
    return crd;
  }

  /** An InferencePool v1 selecting {@code key=value} on the given target ports. */
  static ObjectNode pool(String name, String key, String value, int... ports) {
    ObjectNode p = EndpointMapper.JSON.createObjectNode();
    p.put("apiVersion", "inference.networking.k8s.io/v1");
    p.put("kind", "InferencePool");
    p.putObject("metadata").put("name", name).put("namespace", NS);
    ObjectNode spec = p.putObject("spec");
    spec.putObject("selector").putObject("matchLabels").put(key, value);
    var tp = spec.putArray("targetPorts");
    for (int port : ports) {
      tp.addObject().put("number", port);
    }
    spec.putObject("endpointPickerRef").put("name", "kinference-epp").putObject("port").put("number", 9002);
    return p;
  }

  /** A pool pod: the usual vLLM pod, with {@code app=vllm-qwen3}. */
  static ObjectNode poolPod(String name, String ip, boolean ready) {
    ObjectNode p = pod(name, ip, ready, "qwen3");
    ObjectNode labels = (ObjectNode) p.get("metadata").get("labels");
    labels.put("app", "vllm-qwen3");
    labels.remove(PodAnnotations.POOL);
    return p;
  }

  /** Waits for exactly these ids and checks the change came {@link #PROMPTLY} from {@code since}. */
  private List<Endpoint> promptly(long since, String... ids) throws InterruptedException {
    List<Endpoint> got = deliveries.awaitIds(ids);
    long took = System.nanoTime() - since;
    assertThat(took).as("%s arrived after %d ms", List.of(ids), TimeUnit.NANOSECONDS.toMillis(took))
        .isLessThan(PROMPTLY);
    return got;
  }

  @Test
  void podsAddedMadeUnreadyAndRemovedAreReflectedPromptly() throws Exception {
    api.create(POOLS, pool("qwen3", "app", "vllm-qwen3", 8000));
    api.create(POOLS, pool("other", "app", "other", 8000)); // another pool in the namespace: not ours
    api.create(PODS, poolPod("vllm-a", "192.0.2.1", true));
    api.create(PODS, pod("stranger", "192.0.2.9", true, "qwen3")); // app=vllm: not selected

    source = InferencePoolSource.builder().config(api.config()).pool(NS + "/qwen3").build();
    source.start(deliveries);
    List<Endpoint> first = deliveries.awaitIds("llm/vllm-a");
    Endpoint a = first.get(0);
    assertThat(a.uri()).isEqualTo(URI.create("http://192.0.2.1:8000"));
    assertThat(a.model()).isEqualTo("qwen3");
    assertThat(a.labels()).containsEntry("app", "vllm-qwen3").containsEntry(PodAnnotations.POOL, "qwen3")
        .containsEntry(PodAnnotations.POD_LABEL, "vllm-a").containsEntry(PodAnnotations.NAMESPACE_LABEL, NS)
        .containsEntry(EndpointLabels.KV_EVENTS, "tcp://192.0.2.1:5557");

    // Added: a ready pod joins; an unready one does not.
    long t = System.nanoTime();
    api.create(PODS, poolPod("vllm-b", "192.0.2.2", true));
    api.create(PODS, poolPod("vllm-c", "192.0.2.3", false));
    promptly(t, "llm/vllm-a", "llm/vllm-b");

    // Made ready, then unready.
    t = System.nanoTime();
    api.replace(PODS, poolPod("vllm-c", "192.0.2.3", true));
    promptly(t, "llm/vllm-a", "llm/vllm-b", "llm/vllm-c");
    t = System.nanoTime();
    api.replace(PODS, poolPod("vllm-a", "192.0.2.1", false));
    promptly(t, "llm/vllm-b", "llm/vllm-c");

    // Being deleted (held by a finalizer), then removed.
    ObjectNode deleting = poolPod("vllm-b", "192.0.2.2", true);
    ((ObjectNode) deleting.get("metadata")).put("deletionTimestamp", "2026-01-01T00:00:00Z");
    ((ObjectNode) deleting.get("metadata")).putArray("finalizers").add("test/hold");
    t = System.nanoTime();
    api.replace(PODS, deleting);
    promptly(t, "llm/vllm-c");
    t = System.nanoTime();
    api.delete(PODS, "vllm-c");
    List<Endpoint> none = deliveries.await("no endpoints", List::isEmpty);
    assertThat(System.nanoTime() - t).isLessThan(PROMPTLY);
    assertThat(none).isEmpty();
    assertThat(source.currentEndpoints()).isEmpty();
  }

  @Test
  void selectorAndPortChangesApplyLiveAndAMissingPoolMeansNoEndpoints() throws Exception {
    api.create(PODS, poolPod("vllm-a", "192.0.2.1", true));
    ObjectNode gpu = poolPod("vllm-g", "192.0.2.7", true);
    ((ObjectNode) gpu.get("metadata").get("labels")).put("app", "vllm-gpu");
    api.create(PODS, gpu);

    source = InferencePoolSource.builder().config(api.config()).pool(NS, "qwen3").build();
    source.start(deliveries);
    // No pool yet: an empty set once listed.
    deliveries.await("no endpoints", List::isEmpty);

    long t = System.nanoTime();
    api.create(POOLS, pool("qwen3", "app", "vllm-qwen3", 8000));
    promptly(t, "llm/vllm-a");

    // The selector changes: other pods.
    t = System.nanoTime();
    api.replace(POOLS, pool("qwen3", "app", "vllm-gpu", 8000));
    promptly(t, "llm/vllm-g");

    // Two target ports: one endpoint per pod and port.
    t = System.nanoTime();
    api.replace(POOLS, pool("qwen3", "app", "vllm-gpu", 8000, 8001));
    List<Endpoint> two = promptly(t, "llm/vllm-g", "llm/vllm-g:8001");
    assertThat(two.get(1).uri()).isEqualTo(URI.create("http://192.0.2.7:8001"));

    // The port changes.
    t = System.nanoTime();
    api.replace(POOLS, pool("qwen3", "app", "vllm-gpu", 9000));
    List<Endpoint> moved = deliveries.await("port 9000",
        set -> set.size() == 1 && set.get(0).uri().getPort() == 9000);
    assertThat(System.nanoTime() - t).isLessThan(PROMPTLY);
    assertThat(moved.get(0).id()).isEqualTo("llm/vllm-g");

    // The pool is deleted: nothing.
    api.delete(POOLS, "qwen3");
    deliveries.await("no endpoints", List::isEmpty);
  }

  @Test
  void thePoolIsNamedNamespaceSlashName() {
    assertThat(InferencePoolSource.builder().pool("llm/qwen3").build().pool()).isEqualTo("llm/qwen3");
    assertThatThrownBy(() -> InferencePoolSource.builder().pool("qwen3"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NAMESPACE/NAME");
    assertThatThrownBy(() -> InferencePoolSource.builder().pool("llm/Qwen_3"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> InferencePoolSource.builder().build()).isInstanceOf(IllegalStateException.class);
  }
}
