package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.Parsed;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.config.Problem;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy resources of a namespace, watched as custom resources of group {@code kinference.dev}, version
 * {@code v1alpha1}: InferencePool, ModelAlias, ExternalProvider, Tenant and InferencePolicy (CRDs in
 * {@code deploy/crds}). Each object goes through the same checks as a policy file ({@link PolicyLoader#parse} on
 * its own, then {@link PolicyLoader#build} across all); an object with an error is reported (a WARN log line and a
 * Warning Event on the object) and left out, never applied, and so is an object whose cross-resource check fails
 * (such as an alias naming a missing pool). The listener then receives the configuration built from the valid
 * objects: after all five kinds have been listed, and after every change.
 *
 * <p>Needs RBAC {@code get, list, watch} on the five resources and {@code create} on {@code events}. The listener
 * is called on a watch thread, never concurrently with itself. Thread-safe.
 */
public final class PolicyResourceSource implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PolicyResourceSource.class);

  /** The API group and version of the custom resources. */
  public static final String API_VERSION = "kinference.dev/v1alpha1";

  /** The kinds watched and their plural resource names, in delivery order. */
  public static final Map<String, String> KINDS = kinds();

  private static Map<String, String> kinds() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("InferencePool", "inferencepools");
    m.put("ExternalProvider", "externalproviders");
    m.put("ModelAlias", "modelaliases");
    m.put("Tenant", "tenants");
    m.put("InferencePolicy", "inferencepolicies");
    return java.util.Collections.unmodifiableMap(m);
  }

  /** One object left out, and why. */
  public record Rejected(String kind, String name, String resourceVersion, List<String> problems) {}

  private final KubernetesConfig config;
  private final String namespace;
  private final ResourceWatcher.Options options;
  private final boolean recordEvents;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Object lock = new Object();
  private volatile boolean closed;
  // guarded by lock
  private @Nullable ApiClient client;
  private final List<ResourceWatcher> watchers = new ArrayList<>();
  private final Map<String, Map<String, JsonNode>> byKind = new TreeMap<>();
  private @Nullable Consumer<PolicyConfig> listener;
  private @Nullable Set<String> deliveredVersions;
  private final Set<String> reported = new HashSet<>();
  private List<Rejected> rejected = List.of();
  private @Nullable PolicyConfig current;

  private PolicyResourceSource(Builder b) {
    this.config = b.config != null ? b.config : KubernetesConfig.autodetect();
    String ns = b.namespace != null ? b.namespace : config.namespace();
    this.namespace = ns != null ? ns : "default";
    this.options = new ResourceWatcher.Options(b.transport, b.initialBackoff, b.maxBackoff,
        ResourceWatcher.Options.DEFAULT.watchTimeout(), ResourceWatcher.Options.DEFAULT.idleTimeout(), 500);
    this.recordEvents = b.recordEvents;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Starts the watches; {@code consumer} receives each valid configuration. Calling twice is an error. */
  public void start(Consumer<PolicyConfig> consumer) {
    Objects.requireNonNull(consumer, "listener");
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("already started");
    }
    synchronized (lock) {
      if (closed) {
        return;
      }
      listener = consumer;
      ApiClient c = new ApiClient(config);
      client = c;
      SplittableRandom random = new SplittableRandom();
      for (Map.Entry<String, String> k : KINDS.entrySet()) {
        String kind = k.getKey();
        watchers.add(new ResourceWatcher(k.getValue() + "/" + namespace, c,
            "/apis/" + API_VERSION + "/namespaces/" + namespace + "/" + k.getValue(), Map.of(), options,
            objects -> onChange(kind, objects), random.split()));
      }
      log.info("Watching Kinference policy resources in namespace {} via {}", namespace, config);
      watchers.forEach(ResourceWatcher::start);
    }
  }

  private void onChange(String kind, Map<String, JsonNode> objects) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      byKind.put(kind, Map.copyOf(objects));
      if (byKind.size() < KINDS.size()) {
        return; // deliver only once every kind has been listed
      }
      Set<String> versions = new HashSet<>();
      byKind.values().forEach(m -> m.values().forEach(o -> versions.add(versionKey(o))));
      if (versions.equals(deliveredVersions)) {
        return;
      }
      deliveredVersions = versions;
      rebuild();
    }
  }

  private void rebuild() {
    // 1. Each object on its own.
    Map<String, JsonNode> bySource = new LinkedHashMap<>();
    Map<String, Parsed> valid = new LinkedHashMap<>();
    List<Rejected> out = new ArrayList<>();
    for (String kind : KINDS.keySet()) {
      for (JsonNode object : new TreeMap<>(byKind.getOrDefault(kind, Map.of())).values()) {
        String source = source(kind, object);
        bySource.put(source, object);
        Parsed parsed = PolicyLoader.parse(toMap(kind, object), source);
        if (parsed.ok()) {
          valid.put(source, parsed);
        } else {
          out.add(reject(kind, object, errors(parsed.problems())));
        }
      }
    }
    // 2. Across objects: leave out those with cross-resource errors until the rest builds.
    LoadResult result = PolicyLoader.build(List.copyOf(valid.values()));
    for (int round = 0; result.config() == null && round < 16 && !valid.isEmpty(); round++) {
      Map<String, List<String>> culprits = new LinkedHashMap<>();
      for (Problem p : result.errors()) {
        if (valid.containsKey(p.source())) {
          culprits.computeIfAbsent(p.source(), s -> new ArrayList<>()).add(describe(p));
        }
      }
      if (culprits.isEmpty()) {
        break;
      }
      for (Map.Entry<String, List<String>> c : culprits.entrySet()) {
        valid.remove(c.getKey());
        JsonNode object = Objects.requireNonNull(bySource.get(c.getKey()));
        out.add(reject(object.path("kind").asText(kindOf(c.getKey())), object, c.getValue()));
      }
      result = PolicyLoader.build(List.copyOf(valid.values()));
    }
    rejected = List.copyOf(out);
    PolicyConfig cfg = result.config();
    if (cfg == null) {
      log.warn("Kinference policy resources in {} do not build; keeping the previous configuration:\n{}",
          namespace, result.report());
      return;
    }
    for (Problem p : result.warnings()) {
      log.info("policy warning: {}", p);
    }
    current = cfg;
    try {
      Objects.requireNonNull(listener).accept(cfg);
    } catch (RuntimeException e) {
      log.error("The policy listener failed", e);
    }
  }

  private Rejected reject(String kind, JsonNode object, List<String> problems) {
    JsonNode meta = object.path("metadata");
    String name = meta.path("name").asText("?");
    String rv = meta.path("resourceVersion").asText("");
    Rejected r = new Rejected(kind, name, rv, problems);
    String key = kind + "/" + name + "@" + rv;
    if (reported.add(key)) {
      log.warn("Ignoring invalid {} {}/{}: {}", kind, namespace, name, String.join("; ", problems));
      if (recordEvents) {
        recordEvent(kind, object, String.join("; ", problems));
      }
    }
    return r;
  }

  private void recordEvent(String kind, JsonNode object, String message) {
    ApiClient c = client;
    if (c == null) {
      return;
    }
    JsonNode meta = object.path("metadata");
    String name = meta.path("name").asText("");
    ObjectNode e = ApiClient.JSON.createObjectNode();
    e.put("apiVersion", "v1");
    e.put("kind", "Event");
    ObjectNode em = e.putObject("metadata");
    em.put("generateName", name + ".");
    em.put("namespace", namespace);
    ObjectNode involved = e.putObject("involvedObject");
    involved.put("apiVersion", API_VERSION);
    involved.put("kind", kind);
    involved.put("name", name);
    involved.put("namespace", namespace);
    if (meta.hasNonNull("uid")) {
      involved.put("uid", meta.get("uid").asText());
    }
    if (meta.hasNonNull("resourceVersion")) {
      involved.put("resourceVersion", meta.get("resourceVersion").asText());
    }
    e.put("reason", "InvalidPolicy");
    e.put("message", message.length() > 1000 ? message.substring(0, 1000) + "..." : message);
    e.put("type", "Warning");
    e.putObject("source").put("component", "kinference");
    e.put("reportingComponent", "kinference");
    String now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    e.put("firstTimestamp", now);
    e.put("lastTimestamp", now);
    e.put("count", 1);
    try {
      c.post("/api/v1/namespaces/" + namespace + "/events", e);
    } catch (IOException ex) {
      log.debug("Could not record an event for {} {}: {}", kind, name, ex.getMessage());
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    }
  }

  /** The configuration last delivered, or null. */
  public @Nullable PolicyConfig current() {
    synchronized (lock) {
      return current;
    }
  }

  /** The objects left out of the last configuration, with their problems. */
  public List<Rejected> rejected() {
    synchronized (lock) {
      return rejected;
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

  private static String versionKey(JsonNode o) {
    JsonNode m = o.path("metadata");
    return m.path("name").asText() + "/" + m.path("uid").asText() + "@" + m.path("resourceVersion").asText();
  }

  private String source(String kind, JsonNode object) {
    return "kubernetes:" + namespace + "/" + kind + "/" + object.path("metadata").path("name").asText("?");
  }

  private static String kindOf(String source) {
    String[] parts = source.split("/");
    return parts.length >= 2 ? parts[parts.length - 2] : "?";
  }

  @SuppressWarnings("unchecked") // Jackson maps a JSON object to Map<String, Object>
  private static Map<String, Object> toMap(String kind, JsonNode object) {
    ObjectNode copy = object.deepCopy();
    // A list response's items carry no kind or apiVersion.
    if (!copy.hasNonNull("kind")) {
      copy.put("kind", kind);
    }
    if (!copy.hasNonNull("apiVersion")) {
      copy.put("apiVersion", API_VERSION);
    }
    return ApiClient.JSON.convertValue(copy, Map.class);
  }

  private static List<String> errors(List<Problem> problems) {
    return problems.stream().filter(Problem::isError).map(PolicyResourceSource::describe)
        .collect(Collectors.toList());
  }

  private static String describe(Problem p) {
    return (p.path().isEmpty() ? "" : p.path() + ": ") + p.message();
  }

  /** Configures a {@link PolicyResourceSource}. Not thread-safe. */
  public static final class Builder {
    private @Nullable KubernetesConfig config;
    private @Nullable String namespace;
    private WatchTransport transport = WatchTransport.HTTP_STREAM;
    private Duration initialBackoff = ResourceWatcher.Options.DEFAULT.initialBackoff();
    private Duration maxBackoff = ResourceWatcher.Options.DEFAULT.maxBackoff();
    private boolean recordEvents = true;

    private Builder() {}

    /** How to reach the API server. Default: {@link KubernetesConfig#autodetect()}. */
    public Builder config(KubernetesConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    /** The namespace whose resources make the configuration. Default: the configuration's, else default. */
    public Builder namespace(String namespace) {
      if (namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank");
      }
      this.namespace = namespace;
      return this;
    }

    public Builder transport(WatchTransport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    public Builder backoff(Duration initial, Duration max) {
      ResourceWatcher.Options.checkBackoff(initial, max);
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /** Whether invalid objects get a Warning Event (needs RBAC create on events). Default true. */
    public Builder recordEvents(boolean record) {
      this.recordEvents = record;
      return this;
    }

    public PolicyResourceSource build() {
      return new PolicyResourceSource(this);
    }
  }
}
