package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Endpoints from one Gateway API Inference Extension {@code InferencePool} ({@code inference.networking.k8s.io/v1}):
 * the Ready pods in the pool's namespace whose labels include its {@code spec.selector.matchLabels}, each served on
 * the pool's {@code spec.targetPorts[].number} (one endpoint per pod and port). Pods are mapped as
 * {@link KubernetesEndpointSource} maps them ({@link PodAnnotations}: model, scheme, metrics port, KV events; the
 * pod's labels become the endpoint's), with {@code kinference.dev/pool} the pool's name unless the pod names one.
 *
 * <pre>{@code
 * EndpointSource pool = InferencePoolSource.builder().pool("llm/qwen3").defaultModel("Qwen/Qwen3-8B").build();
 * }</pre>
 *
 * <p>The pool and the namespace's pods are kept by fabric8 shared informers under the same watchdog as
 * {@link KubernetesEndpointSource} ({@code ClusterConnection}); every change to either is applied at once, a changed
 * selector or target port included. All pods of the namespace are watched (the selector may change), so RBAC needs
 * {@code get, list, watch} on {@code pods} and on {@code inferencepools.inference.networking.k8s.io} there. While the
 * pool does not exist there are no endpoints (with a warning). This is not Kinference's own pool kind
 * ({@code inferencepools.kinference.dev}, read by {@link PolicyResourceSource}), which keeps working beside it.
 * Every change delivers the complete set once both collections have been listed; the listener is called on a watch
 * thread, never concurrently with itself. Thread-safe.
 */
public final class InferencePoolSource implements EndpointSource {

  /** The Gateway API Inference Extension's group. */
  public static final String GROUP = "inference.networking.k8s.io";

  static final ResourceDefinitionContext POOLS = new ResourceDefinitionContext.Builder().withGroup(GROUP)
      .withVersion("v1").withKind("InferencePool").withPlural("inferencepools").withNamespaced(true).build();

  private static final Logger log = LoggerFactory.getLogger(InferencePoolSource.class);

  private final Builder settings;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Object lock = new Object();
  // guarded by lock
  private boolean closed;
  private @Nullable ClusterConnection connection;
  private @Nullable List<Endpoint> delivered;
  private @Nullable Consumer<List<Endpoint>> listener;
  private @Nullable String reportedState;
  private Map<String, String> reportedSkips = Map.of();

  private InferencePoolSource(Builder b) {
    this.settings = b;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String name() {
    return "inference-pool";
  }

  /** The pool watched, {@code namespace/name}. */
  public String pool() {
    return settings.namespace + "/" + settings.name;
  }

  @Override
  public void start(Consumer<List<Endpoint>> consumer) {
    Objects.requireNonNull(consumer, "listener");
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("already started");
    }
    Builder b = settings;
    Supplier<Config> configs = b.configSupplier();
    String ns = Objects.requireNonNull(b.namespace);
    ClusterConnection c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      listener = consumer;
      Supplier<Config> supply = configs;
      c = new ClusterConnection("inference-pool/" + pool(), supply,
          b.options(), (client, changed) -> {
            List<SharedIndexInformer<?>> informers = new ArrayList<>();
            SharedIndexInformer<GenericKubernetesResource> pools = client.genericKubernetesResources(POOLS)
                .inNamespace(ns).runnableInformer(0);
            pools.addEventHandler(ClusterConnection.handler(changed));
            informers.add(pools);
            SharedIndexInformer<Pod> pods = client.pods().inNamespace(ns).runnableInformer(0);
            pods.addEventHandler(ClusterConnection.handler(changed));
            informers.add(pods);
            return informers;
          }, this::onChange);
      connection = c;
      log.info("Discovering endpoints from InferencePool {} ({}/v1)", pool(), GROUP);
    }
    c.start();
  }

  private void onChange(ClusterConnection.Generation g) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      JsonNode pool = null;
      List<JsonNode> pods = new ArrayList<>();
      for (SharedIndexInformer<?> i : g.informers) {
        for (Object o : i.getStore().list()) {
          if (o instanceof Pod p) {
            pods.add(EndpointMapper.toJson(p));
          } else if (o instanceof GenericKubernetesResource r && settings.name.equals(r.getMetadata().getName())) {
            pool = EndpointMapper.toJson(r);
          }
        }
      }
      deliver(endpoints(pool, pods, settings, this::reportState));
    }
  }

  /** The endpoints of a pool (null: absent) over the namespace's pods; {@code state} hears what is wrong, or null. */
  static EndpointMapper.Result endpoints(@Nullable JsonNode pool, List<JsonNode> pods, Builder b,
      Consumer<@Nullable String> state) {
    if (pool == null) {
      state.accept("no InferencePool " + b.namespace + "/" + b.name + " (" + GROUP + "/v1); no endpoints until "
          + "it is created");
      return new EndpointMapper.Result(List.of(), Map.of());
    }
    JsonNode spec = pool.path("spec");
    Map<String, String> matchLabels = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : spec.path("selector").path("matchLabels").properties()) {
      matchLabels.put(e.getKey(), e.getValue().asText());
    }
    List<Integer> ports = new ArrayList<>();
    for (JsonNode p : spec.path("targetPorts")) {
      Integer n = EndpointMapper.numeric(p.path("number").asText(""));
      if (n != null && !ports.contains(n)) {
        ports.add(n);
      }
    }
    if (matchLabels.isEmpty()) {
      state.accept("InferencePool " + b.namespace + "/" + b.name + " has no spec.selector.matchLabels; no endpoints");
      return new EndpointMapper.Result(List.of(), Map.of());
    }
    if (ports.isEmpty()) {
      state.accept("InferencePool " + b.namespace + "/" + b.name + " has no spec.targetPorts; no endpoints");
      return new EndpointMapper.Result(List.of(), Map.of());
    }
    state.accept(null);
    List<JsonNode> selected = new ArrayList<>();
    for (JsonNode pod : pods) {
      JsonNode labels = pod.path("metadata").path("labels");
      boolean matches = true;
      for (Map.Entry<String, String> e : matchLabels.entrySet()) {
        JsonNode v = labels.path(e.getKey());
        if (!v.isTextual() || !v.asText().equals(e.getValue())) {
          matches = false;
          break;
        }
      }
      if (matches) {
        selected.add(pod);
      }
    }
    EndpointMapper.Settings m = new EndpointMapper.Settings("http", ports.get(0), b.defaultModel, b.name, false);
    return EndpointMapper.fromPods(selected, m, ports);
  }

  private void reportState(@Nullable String problem) {
    if (!Objects.equals(problem, reportedState)) {
      if (problem != null) {
        log.warn("{}", problem);
      } else if (reportedState != null) {
        log.info("InferencePool {} is usable again", pool());
      }
      reportedState = problem;
    }
  }

  private void deliver(EndpointMapper.Result result) {
    for (Map.Entry<String, String> e : result.skipped().entrySet()) {
      if (!e.getValue().equals(reportedSkips.get(e.getKey()))) {
        log.warn("Not routing to {}: {}", e.getKey(), e.getValue());
      }
    }
    reportedSkips = Map.copyOf(result.skipped());
    if (result.endpoints().equals(delivered)) {
      return;
    }
    delivered = result.endpoints();
    log.debug("Endpoints of InferencePool {} now {}", pool(), delivered);
    try {
      Objects.requireNonNull(listener).accept(delivered);
    } catch (RuntimeException e) {
      log.error("The endpoint listener failed", e);
    }
  }

  /** Why pods of the pool are currently left out, keyed {@code namespace/pod}. */
  public Map<String, String> skipped() {
    synchronized (lock) {
      return reportedSkips;
    }
  }

  /** The last delivered set, or an empty list before the first. */
  public List<Endpoint> currentEndpoints() {
    synchronized (lock) {
      return delivered == null ? List.of() : delivered;
    }
  }

  @Override
  public void close() {
    ClusterConnection c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      c = connection;
    }
    if (c != null) {
      c.close();
    }
  }

  /** Configures an {@link InferencePoolSource}; each setter validates its argument. Not thread-safe. */
  public static final class Builder extends ClusterSettings<Builder> {
    private @Nullable String namespace;
    private String name = "";
    private @Nullable String defaultModel;

    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /** The pool as {@code namespace/name}. */
    public Builder pool(String namespaceSlashName) {
      int slash = namespaceSlashName.indexOf('/');
      if (slash < 0 || slash != namespaceSlashName.lastIndexOf('/')) {
        throw new IllegalArgumentException("give the InferencePool as NAMESPACE/NAME, not '" + namespaceSlashName
            + "'");
      }
      return pool(namespaceSlashName.substring(0, slash), namespaceSlashName.substring(slash + 1));
    }

    /** The pool's namespace (where its pods are too) and name. */
    public Builder pool(String namespace, String name) {
      this.namespace = dnsName(namespace, "namespace");
      this.name = dnsName(name, "InferencePool name");
      return this;
    }

    /** The model of pods that name none ({@link PodAnnotations#MODEL}). Default: none (such pods are skipped). */
    public Builder defaultModel(String model) {
      if (model.isBlank()) {
        throw new IllegalArgumentException("model must not be blank");
      }
      this.defaultModel = model.strip();
      return this;
    }

    public InferencePoolSource build() {
      if (namespace == null) {
        throw new IllegalStateException("give the InferencePool (pool(namespace, name))");
      }
      Builder copy = new Builder();
      copySettingsTo(copy);
      copy.namespace = namespace;
      copy.name = name;
      copy.defaultModel = defaultModel;
      options(); // validates
      return new InferencePoolSource(copy);
    }

    private static String dnsName(String value, String what) {
      if (!value.matches("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")) {
        throw new IllegalArgumentException(what + " is not a valid Kubernetes name: '" + value + "'");
      }
      return value;
    }
  }
}
