package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Endpoints from the Kubernetes API: the ready addresses of a Service's {@code discovery.k8s.io/v1}
 * EndpointSlices, described by their pods' labels and annotations ({@link PodAnnotations}); or, without a
 * Service, the ready pods matching a label selector.
 *
 * <pre>{@code
 * Router router = Router.builder()
 *     .endpointSource(KubernetesEndpointSource.builder()
 *         .namespace("llm").service("vllm-qwen3").build())
 *     .build();
 * }</pre>
 *
 * <p>Both collections are kept by fabric8 shared informers (list, then watch with bookmarks; relisting after 410
 * Gone; reconnecting with backoff) on the JDK's HTTP client. A watch that goes silent (a dead connection that
 * nobody closed) is noticed and replaced within {@code idleTimeout + 10 s} (default 2 min 10 s), and a changed
 * kubeconfig or CA file (a rotated cluster CA) brings a new client; see {@code ClusterConnection}. Every change
 * delivers the complete set of endpoints, once both collections have been listed. An address leaves the set when
 * its EndpointSlice conditions are not {@code ready} and {@code serving}, or say {@code terminating}, or its pod is
 * not Ready or is being deleted, and the {@link dev.kinference.endpoint.Fleet} then drains it (no new requests,
 * in-flight ones finish, its cache entries are dropped). An address whose pod never appears is reported once and
 * left out until it does (with a warning, once, when that has lasted 10 s). While the API server is unreachable
 * the last set stays in force.
 *
 * <p>Needs RBAC {@code get, list, watch} on {@code endpointslices.discovery.k8s.io} (service mode) and
 * {@code pods}. The listener is called on a watch thread, never concurrently with itself. Thread-safe.
 *
 * <p>The public no-argument constructor (used by {@link java.util.ServiceLoader} under the name
 * {@code kubernetes}) reads its settings from the environment when started: {@code KINFERENCE_K8S_NAMESPACE},
 * {@code KINFERENCE_K8S_SERVICE}, {@code KINFERENCE_K8S_POD_SELECTOR}, {@code KINFERENCE_K8S_MODEL},
 * {@code KINFERENCE_K8S_POOL}, {@code KINFERENCE_K8S_PORT_NAME}, with the API server found by
 * {@link KubernetesConfigs#autodetect()}.
 */
public final class KubernetesEndpointSource implements EndpointSource {

  private static final Logger log = LoggerFactory.getLogger(KubernetesEndpointSource.class);

  private final @Nullable Builder settings;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Object lock = new Object();
  private volatile boolean closed;
  // guarded by lock
  private @Nullable ClusterConnection connection;
  private @Nullable List<Endpoint> delivered;
  private Map<String, String> reportedSkips = Map.of();
  private final Map<String, Long> unknownSince = new HashMap<>();
  private final Set<String> warnedUnknown = new HashSet<>();
  private @Nullable Consumer<List<Endpoint>> listener;
  private EndpointMapper.@Nullable Settings mapping;
  private boolean serviceMode;
  private boolean watchPods;

  /** For {@link java.util.ServiceLoader}: configured from the environment when started (see the class doc). */
  public KubernetesEndpointSource() {
    this.settings = null;
  }

  private KubernetesEndpointSource(Builder b) {
    this.settings = b;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String name() {
    return "kubernetes";
  }

  @Override
  public void start(Consumer<List<Endpoint>> consumer) {
    Objects.requireNonNull(consumer, "listener");
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("already started");
    }
    Builder b = settings != null ? settings : Builder.fromEnvironment(System.getenv());
    Supplier<Config> configs = b.configSupplier();
    Config first = configs.get();
    Supplier<Config> later = configs;
    Supplier<Config> supply = new Supplier<>() {
      private @Nullable Config initial = first;

      @Override
      public synchronized Config get() {
        Config c = initial;
        initial = null;
        return c != null ? c : later.get();
      }
    };
    String ns = b.namespace != null ? b.namespace : first.getNamespace() != null ? first.getNamespace() : "default";
    String service = b.service;
    String podSelector = b.podSelector;
    ClusterConnection c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      listener = consumer;
      serviceMode = service != null;
      watchPods = !serviceMode || b.watchPods;
      mapping = new EndpointMapper.Settings(b.portName, b.defaultPort, b.defaultModel, b.defaultPool,
          serviceMode && watchPods);
      boolean pods = watchPods;
      c = new ClusterConnection("endpoints/" + ns, supply, b.options(), (client, changed) -> {
        List<SharedIndexInformer<?>> informers = new ArrayList<>();
        if (service != null) {
          SharedIndexInformer<EndpointSlice> slices = client.discovery().v1().endpointSlices().inNamespace(ns)
              .withLabel("kubernetes.io/service-name", service).runnableInformer(0);
          slices.addEventHandler(ClusterConnection.handler(changed));
          informers.add(slices);
        }
        if (pods) {
          informers.add(podInformer(client, ns, podSelector, changed));
        }
        return informers;
      }, this::onChange);
      c.onCheck(this::reportUnknownPods);
      connection = c;
      log.info("Discovering endpoints in namespace {} from {} on {}", ns,
          serviceMode ? "the EndpointSlices of service " + service : "pods " + podSelector, first.getMasterUrl());
    }
    c.start();
  }

  private static SharedIndexInformer<Pod> podInformer(KubernetesClient client, String ns,
      @Nullable String selector, Runnable changed) {
    SharedIndexInformer<Pod> informer = selector == null
        ? client.pods().inNamespace(ns).runnableInformer(0)
        : client.pods().inNamespace(ns).withLabelSelector(selector).runnableInformer(0);
    informer.addEventHandler(ClusterConnection.handler(changed));
    return informer;
  }

  private void onChange(ClusterConnection.Generation g) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      List<JsonNode> slices = new ArrayList<>();
      Map<String, JsonNode> pods = new HashMap<>();
      for (SharedIndexInformer<?> i : g.informers) {
        for (Object o : i.getStore().list()) {
          JsonNode n = EndpointMapper.toJson(o);
          if (o instanceof Pod p) {
            pods.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), n);
          } else {
            slices.add(n);
          }
        }
      }
      EndpointMapper.Settings m = Objects.requireNonNull(mapping);
      EndpointMapper.Result result = serviceMode ? EndpointMapper.fromSlices(slices, pods, m)
          : EndpointMapper.fromPods(pods.values(), m);
      reportSkips(result.skipped());
      if (result.endpoints().equals(delivered)) {
        return;
      }
      delivered = result.endpoints();
      log.debug("Endpoints now {}", delivered);
      try {
        Objects.requireNonNull(listener).accept(delivered);
      } catch (RuntimeException e) {
        log.error("The endpoint listener failed", e);
      }
    }
  }

  /** How long an address's pod may be unknown before a warning: the slice and the pod arrive separately. */
  private static final long UNKNOWN_POD_GRACE_NANOS = TimeUnit.SECONDS.toNanos(10);

  private void reportSkips(Map<String, String> skipped) {
    long now = System.nanoTime();
    for (Map.Entry<String, String> e : skipped.entrySet()) {
      if (EndpointMapper.POD_UNKNOWN.equals(e.getValue())) {
        unknownSince.putIfAbsent(e.getKey(), now);
      } else if (!e.getValue().equals(reportedSkips.get(e.getKey()))) {
        log.warn("Not routing to {}: {}", e.getKey(), e.getValue());
      }
    }
    unknownSince.keySet().removeIf(k -> {
      if (EndpointMapper.POD_UNKNOWN.equals(skipped.get(k))) {
        return false;
      }
      if (warnedUnknown.remove(k)) {
        log.info("The pod of {} has appeared (or its address left the Service)", k);
      }
      return true;
    });
    reportedSkips = Map.copyOf(skipped);
  }

  /** Warns, once, about addresses whose pod has stayed unknown past the grace period (watchdog thread). */
  private void reportUnknownPods() {
    synchronized (lock) {
      long now = System.nanoTime();
      for (Map.Entry<String, Long> e : unknownSince.entrySet()) {
        if (now - e.getValue() >= UNKNOWN_POD_GRACE_NANOS && warnedUnknown.add(e.getKey())) {
          log.warn("Not routing to {}: {} (no such pod among those watched for over 10 s; a pod selector that "
              + "leaves it out?)", e.getKey(), EndpointMapper.POD_UNKNOWN);
        }
      }
    }
  }

  /** Why addresses are currently left out, keyed by pod ({@code namespace/name}) or address. */
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

  /** How many clients (with their informers) have been started: more than one after a dead watch or a new CA. */
  int generations() {
    ClusterConnection c;
    synchronized (lock) {
      c = connection;
    }
    return c == null ? 0 : c.generations();
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

  /** Configures a {@link KubernetesEndpointSource}; each setter validates its argument. Not thread-safe. */
  public static final class Builder extends ClusterSettings<Builder> {
    private @Nullable String namespace;
    private @Nullable String service;
    private @Nullable String podSelector;
    private boolean watchPods = true;
    private String portName = "http";
    private int defaultPort = 8000;
    private @Nullable String defaultModel;
    private @Nullable String defaultPool;

    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    static Builder fromEnvironment(Map<String, String> env) {
      Builder b = new Builder();
      String ns = env.get("KINFERENCE_K8S_NAMESPACE");
      if (ns != null && !ns.isBlank()) {
        b.namespace(ns.strip());
      }
      String svc = env.get("KINFERENCE_K8S_SERVICE");
      String sel = env.get("KINFERENCE_K8S_POD_SELECTOR");
      if (svc != null && !svc.isBlank()) {
        b.service(svc.strip());
      }
      if (sel != null && !sel.isBlank()) {
        b.podSelector(sel.strip());
      }
      if (b.service == null && b.podSelector == null) {
        throw new IllegalStateException("the kubernetes endpoint source needs KINFERENCE_K8S_SERVICE or "
            + "KINFERENCE_K8S_POD_SELECTOR");
      }
      String model = env.get("KINFERENCE_K8S_MODEL");
      if (model != null && !model.isBlank()) {
        b.defaultModel(model.strip());
      }
      String pool = env.get("KINFERENCE_K8S_POOL");
      if (pool != null && !pool.isBlank()) {
        b.defaultPool(pool.strip());
      }
      String port = env.get("KINFERENCE_K8S_PORT_NAME");
      if (port != null && !port.isBlank()) {
        b.portName(port.strip());
      }
      return b;
    }

    /** The namespace of the Service or pods. Default: the configuration's, else {@code default}. */
    public Builder namespace(String namespace) {
      this.namespace = dnsLabel(namespace, "namespace");
      return this;
    }

    /** Discover the EndpointSlices of this Service (label {@code kubernetes.io/service-name}). */
    public Builder service(String service) {
      this.service = dnsLabel(service, "service");
      return this;
    }

    /**
     * A label selector such as {@code app=vllm,tier=gpu}. Without a Service: the pods to route to. With one: narrows
     * the pods watched for their annotations.
     */
    public Builder podSelector(String selector) {
      if (selector.isBlank()) {
        throw new IllegalArgumentException("pod selector must not be blank");
      }
      this.podSelector = selector.strip();
      return this;
    }

    /**
     * With a Service: whether pods are watched for their annotations (default true). Without, every ready address
     * serves {@link #defaultModel} and nothing else is known of it; RBAC then needs no access to pods.
     */
    public Builder watchPods(boolean watch) {
      this.watchPods = watch;
      return this;
    }

    /** The serving port's name when a pod does not say ({@link PodAnnotations#PORT}). Default {@code http}. */
    public Builder portName(String name) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("port name must not be blank");
      }
      this.portName = name;
      return this;
    }

    /** Pod mode: the serving port of a pod that declares no container port. Default 8000 (vLLM's). */
    public Builder defaultPort(int port) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.defaultPort = port;
      return this;
    }

    /** The model of pods that do not name one. Default: none (such pods are skipped, with a warning). */
    public Builder defaultModel(String model) {
      if (model.isBlank()) {
        throw new IllegalArgumentException("model must not be blank");
      }
      this.defaultModel = model;
      return this;
    }

    /** The pool label of pods that do not name one. Default: none. */
    public Builder defaultPool(String pool) {
      if (pool.isBlank()) {
        throw new IllegalArgumentException("pool must not be blank");
      }
      this.defaultPool = pool;
      return this;
    }

    public KubernetesEndpointSource build() {
      if (service == null && podSelector == null) {
        throw new IllegalStateException("give a service or a pod selector");
      }
      Builder copy = new Builder();
      copySettingsTo(copy);
      copy.namespace = namespace;
      copy.service = service;
      copy.podSelector = podSelector;
      copy.watchPods = watchPods;
      copy.portName = portName;
      copy.defaultPort = defaultPort;
      copy.defaultModel = defaultModel;
      copy.defaultPool = defaultPool;
      options(); // validates
      return new KubernetesEndpointSource(copy);
    }

    private static String dnsLabel(String value, String what) {
      if (!value.matches("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")) {
        throw new IllegalArgumentException(what + " is not a valid Kubernetes name: '" + value + "'");
      }
      return value;
    }
  }
}
