package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
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
 * <p>Both collections are kept with list-and-watch (resource versions, bookmarks, relisting after 410 Gone,
 * reconnecting with backoff and jitter; see {@code ResourceWatcher}). Every change delivers the complete set of
 * endpoints, once both collections have been listed; an address whose pod is not ready, terminating or being
 * deleted is left out, and the {@link dev.kinference.endpoint.Fleet} then drains it (no new requests, in-flight
 * ones finish, its cache entries are dropped). While the API server is unreachable the last set stays in force.
 *
 * <p>Needs RBAC {@code get, list, watch} on {@code endpointslices.discovery.k8s.io} (service mode) and
 * {@code pods}. The listener is called on a watch thread, never concurrently with itself. Thread-safe.
 *
 * <p>The public no-argument constructor (used by {@link java.util.ServiceLoader} under the name
 * {@code kubernetes}) reads its settings from the environment when started: {@code KINFERENCE_K8S_NAMESPACE},
 * {@code KINFERENCE_K8S_SERVICE}, {@code KINFERENCE_K8S_POD_SELECTOR}, {@code KINFERENCE_K8S_MODEL},
 * {@code KINFERENCE_K8S_POOL}, {@code KINFERENCE_K8S_PORT_NAME}, with the API server found by
 * {@link KubernetesConfig#autodetect()}.
 */
public final class KubernetesEndpointSource implements EndpointSource {

  private static final Logger log = LoggerFactory.getLogger(KubernetesEndpointSource.class);

  private final @Nullable Builder settings;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Object lock = new Object();
  private volatile boolean closed;
  // guarded by lock
  private @Nullable ApiClient client;
  private final List<ResourceWatcher> watchers = new ArrayList<>();
  private @Nullable Map<String, JsonNode> slices;
  private @Nullable Map<String, JsonNode> pods;
  private @Nullable List<Endpoint> delivered;
  private Map<String, String> reportedSkips = Map.of();
  private @Nullable Consumer<List<Endpoint>> listener;
  private EndpointMapper.@Nullable Settings mapping;
  private boolean serviceMode;

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
    KubernetesConfig config = b.config != null ? b.config : KubernetesConfig.autodetect();
    String ns = b.namespace != null ? b.namespace : config.namespace() != null ? config.namespace() : "default";
    synchronized (lock) {
      if (closed) {
        return;
      }
      listener = consumer;
      serviceMode = b.service != null;
      boolean watchPods = !serviceMode || b.watchPods;
      mapping = new EndpointMapper.Settings(b.portName, b.defaultPort, b.defaultModel, b.defaultPool,
          serviceMode && watchPods);
      ApiClient c = new ApiClient(config);
      client = c;
      ResourceWatcher.Options opts = b.options();
      SplittableRandom random = new SplittableRandom();
      if (serviceMode) {
        Map<String, String> sel = Map.of("labelSelector", "kubernetes.io/service-name=" + b.service);
        watchers.add(new ResourceWatcher("endpointslices/" + ns + "/" + b.service, c,
            "/apis/discovery.k8s.io/v1/namespaces/" + encode(ns) + "/endpointslices", sel, opts,
            objects -> onChange(true, objects), random.split()));
      }
      if (watchPods) {
        Map<String, String> sel = b.podSelector == null ? Map.of() : Map.of("labelSelector", b.podSelector);
        watchers.add(new ResourceWatcher("pods/" + ns, c, "/api/v1/namespaces/" + encode(ns) + "/pods", sel, opts,
            objects -> onChange(false, objects), random.split()));
      } else {
        pods = Map.of();
      }
      log.info("Discovering endpoints in namespace {} from {} via {}", ns,
          serviceMode ? "the EndpointSlices of service " + b.service : "pods " + b.podSelector, config);
      watchers.forEach(ResourceWatcher::start);
    }
  }

  private void onChange(boolean isSlices, Map<String, JsonNode> objects) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      if (isSlices) {
        slices = new HashMap<>(objects);
      } else {
        pods = new HashMap<>(objects);
      }
      Map<String, JsonNode> p = pods;
      EndpointMapper.Settings m = Objects.requireNonNull(mapping);
      EndpointMapper.Result result;
      if (serviceMode) {
        Map<String, JsonNode> s = slices;
        if (s == null || p == null) {
          return; // not listed yet: deliver only complete sets
        }
        result = EndpointMapper.fromSlices(s.values(), p, m);
      } else {
        if (p == null) {
          return;
        }
        result = EndpointMapper.fromPods(p.values(), m);
      }
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

  private void reportSkips(Map<String, String> skipped) {
    for (Map.Entry<String, String> e : skipped.entrySet()) {
      if (!e.getValue().equals(reportedSkips.get(e.getKey())) && !e.getValue().contains("not known yet")) {
        log.warn("Not routing to {}: {}", e.getKey(), e.getValue());
      }
    }
    reportedSkips = Map.copyOf(skipped);
  }

  /** The last delivered set, or an empty list before the first. */
  public List<Endpoint> currentEndpoints() {
    synchronized (lock) {
      return delivered == null ? List.of() : delivered;
    }
  }

  List<ResourceWatcher> watchers() {
    synchronized (lock) {
      return List.copyOf(watchers);
    }
  }

  @Override
  public void close() {
    List<ResourceWatcher> toClose;
    ApiClient c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = List.copyOf(watchers);
      c = client;
    }
    toClose.forEach(ResourceWatcher::close);
    if (c != null) {
      c.close();
    }
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8);
  }

  /** Configures a {@link KubernetesEndpointSource}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private @Nullable KubernetesConfig config;
    private @Nullable String namespace;
    private @Nullable String service;
    private @Nullable String podSelector;
    private boolean watchPods = true;
    private String portName = "http";
    private int defaultPort = 8000;
    private @Nullable String defaultModel;
    private @Nullable String defaultPool;
    private WatchTransport transport = WatchTransport.HTTP_STREAM;
    private Duration initialBackoff = ResourceWatcher.Options.DEFAULT.initialBackoff();
    private Duration maxBackoff = ResourceWatcher.Options.DEFAULT.maxBackoff();
    private Duration watchTimeout = ResourceWatcher.Options.DEFAULT.watchTimeout();
    private @Nullable Duration idleTimeout;

    private Builder() {}

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

    /** How to reach the API server. Default: {@link KubernetesConfig#autodetect()} when started. */
    public Builder config(KubernetesConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
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

    /** How watches are carried. Default {@link WatchTransport#HTTP_STREAM}. */
    public Builder transport(WatchTransport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    /** Reconnect delays: the first, and the cap of the exponential growth. Defaults 500 ms and 30 s. */
    public Builder backoff(Duration initial, Duration max) {
      ResourceWatcher.Options.checkBackoff(initial, max);
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /**
     * How long the server keeps one watch open ({@code timeoutSeconds}, randomised up to twice this). Default 5
     * minutes. A watch silent for this plus a minute is presumed dead unless {@link #idleTimeout} says otherwise.
     */
    public Builder watchTimeout(Duration timeout) {
      if (timeout.toSeconds() < 1) {
        throw new IllegalArgumentException("watch timeout must be at least a second: " + timeout);
      }
      this.watchTimeout = timeout;
      return this;
    }

    /** A watch that delivers nothing for this long is reconnected. Default: twice the watch timeout plus 1 min. */
    public Builder idleTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("idle timeout must be positive: " + timeout);
      }
      this.idleTimeout = timeout;
      return this;
    }

    ResourceWatcher.Options options() {
      Duration idle = idleTimeout != null ? idleTimeout : watchTimeout.multipliedBy(2).plusMinutes(1);
      return new ResourceWatcher.Options(transport, initialBackoff, maxBackoff, watchTimeout, idle, 500);
    }

    public KubernetesEndpointSource build() {
      if (service == null && podSelector == null) {
        throw new IllegalStateException("give a service or a pod selector");
      }
      Builder copy = new Builder();
      copy.config = config;
      copy.namespace = namespace;
      copy.service = service;
      copy.podSelector = podSelector;
      copy.watchPods = watchPods;
      copy.portName = portName;
      copy.defaultPort = defaultPort;
      copy.defaultModel = defaultModel;
      copy.defaultPool = defaultPool;
      copy.transport = transport;
      copy.initialBackoff = initialBackoff;
      copy.maxBackoff = maxBackoff;
      copy.watchTimeout = watchTimeout;
      copy.idleTimeout = idleTimeout;
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
