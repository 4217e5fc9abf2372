package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.Parsed;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.config.Problem;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
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
 * objects: after all five kinds have been listed, and after every change. The resources are kept by fabric8 shared
 * informers, with the same watchdog as {@link KubernetesEndpointSource} (a silent watch is replaced within
 * {@code idleTimeout + 10 s}, a changed CA file brings a new client).
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

  private final Supplier<Config> configs;
  private final @Nullable String namespaceSetting;
  private final ClusterConnection.Options options;
  private final boolean recordEvents;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Object lock = new Object();
  private volatile boolean closed;
  // guarded by lock
  private String namespace = "default";
  private @Nullable ClusterConnection connection;
  private @Nullable KubernetesClient client;
  private final Map<String, Map<String, JsonNode>> byKind = new TreeMap<>();
  private @Nullable Consumer<PolicyConfig> listener;
  private @Nullable Set<String> deliveredVersions;
  private final Set<String> reported = new HashSet<>();
  private List<Rejected> rejected = List.of();
  private @Nullable PolicyConfig current;

  private PolicyResourceSource(Builder b) {
    this.configs = b.configSupplier();
    this.namespaceSetting = b.namespace;
    this.options = b.options();
    this.recordEvents = b.recordEvents;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The namespace watched (known once started). */
  public String namespace() {
    synchronized (lock) {
      return namespace;
    }
  }

  /**
   * Starts the informers; {@code consumer} receives each valid configuration. Calling twice is an error. Throws
   * {@link IllegalStateException} when no configuration is found (no cluster, no kubeconfig).
   */
  public void start(Consumer<PolicyConfig> consumer) {
    Objects.requireNonNull(consumer, "listener");
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("already started");
    }
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
    String ns = namespaceSetting != null ? namespaceSetting
        : first.getNamespace() != null ? first.getNamespace() : "default";
    ClusterConnection c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      namespace = ns;
      listener = consumer;
      c = new ClusterConnection("policy/" + ns, supply, options, (k8s, changed) -> {
        List<SharedIndexInformer<?>> informers = new ArrayList<>();
        for (Map.Entry<String, String> k : KINDS.entrySet()) {
          ResourceDefinitionContext rdc = new ResourceDefinitionContext.Builder().withGroup("kinference.dev")
              .withVersion("v1alpha1").withKind(k.getKey()).withPlural(k.getValue()).withNamespaced(true).build();
          SharedIndexInformer<GenericKubernetesResource> i = k8s.genericKubernetesResources(rdc).inNamespace(ns)
              .runnableInformer(0);
          i.addEventHandler(ClusterConnection.handler(changed));
          informers.add(i);
        }
        return informers;
      }, this::onChange);
      connection = c;
      log.info("Watching Kinference policy resources in namespace {} on {}", ns, first.getMasterUrl());
    }
    c.start();
  }

  private void onChange(ClusterConnection.Generation g) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      client = g.client;
      byKind.clear();
      List<String> kinds = List.copyOf(KINDS.keySet());
      for (int k = 0; k < g.informers.size(); k++) {
        Map<String, JsonNode> objects = new HashMap<>();
        for (Object o : g.informers.get(k).getStore().list()) {
          JsonNode n = EndpointMapper.toJson(o);
          objects.put(n.path("metadata").path("name").asText(), n);
        }
        byKind.put(kinds.get(k), objects);
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
    KubernetesClient c = client;
    if (c == null) {
      return;
    }
    JsonNode meta = object.path("metadata");
    String name = meta.path("name").asText("");
    String now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    EventBuilder e = new EventBuilder()
        .withNewMetadata().withGenerateName(name + ".").withNamespace(namespace).endMetadata()
        .withNewInvolvedObject().withApiVersion(API_VERSION).withKind(kind).withName(name).withNamespace(namespace)
        .withUid(meta.hasNonNull("uid") ? meta.get("uid").asText() : null)
        .withResourceVersion(meta.hasNonNull("resourceVersion") ? meta.get("resourceVersion").asText() : null)
        .endInvolvedObject()
        .withReason("InvalidPolicy")
        .withMessage(message.length() > 1000 ? message.substring(0, 1000) + "..." : message)
        .withType("Warning")
        .withNewSource().withComponent("kinference").endSource()
        .withReportingComponent("kinference")
        .withFirstTimestamp(now).withLastTimestamp(now).withCount(1);
    try {
      c.v1().events().inNamespace(namespace).resource(e.build()).create();
    } catch (KubernetesClientException ex) {
      log.debug("Could not record an event for {} {}: {}", kind, name, ex.getMessage());
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
    return EndpointMapper.JSON.convertValue(copy, Map.class);
  }

  private static List<String> errors(List<Problem> problems) {
    return problems.stream().filter(Problem::isError).map(PolicyResourceSource::describe)
        .collect(Collectors.toList());
  }

  private static String describe(Problem p) {
    return (p.path().isEmpty() ? "" : p.path() + ": ") + p.message();
  }

  /** Configures a {@link PolicyResourceSource}. Not thread-safe. */
  public static final class Builder extends ClusterSettings<Builder> {
    private @Nullable String namespace;
    private boolean recordEvents = true;

    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /**
     * The namespace whose resources make the configuration (a DNS label, as Kubernetes requires). Default: the
     * configuration's, else {@code default}.
     */
    public Builder namespace(String namespace) {
      if (!namespace.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
        throw new IllegalArgumentException("not a Kubernetes namespace name: '" + namespace + "'");
      }
      this.namespace = namespace;
      return this;
    }

    /** Whether invalid objects get a Warning Event (needs RBAC create on events). Default true. */
    public Builder recordEvents(boolean record) {
      this.recordEvents = record;
      return this;
    }

    public PolicyResourceSource build() {
      options(); // validates
      return new PolicyResourceSource(this);
    }
  }
}
