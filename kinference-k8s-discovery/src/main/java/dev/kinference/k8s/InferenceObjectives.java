package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The priorities of the Gateway API Inference Extension's {@code InferenceObjective}s
 * ({@code inference.networking.x-k8s.io/v1alpha2}) of one InferencePool: those in the pool's namespace whose
 * {@code spec.poolRef} names it, by name, with their {@code spec.priority}. A request names its objective in the
 * {@value #HEADER} header. Kept by a fabric8 shared informer under the same watchdog as {@link InferencePoolSource};
 * changes apply at once. An objective without a priority has none here (the caller's default applies). Needs RBAC
 * {@code get, list, watch} on {@code inferenceobjectives.inference.networking.x-k8s.io}, and the CRD installed.
 * Thread-safe; {@link #priority} is a map lookup.
 */
public final class InferenceObjectives implements Function<String, @Nullable Integer>, AutoCloseable {

  /** The header naming a request's InferenceObjective. */
  public static final String HEADER = "x-gateway-inference-objective";

  static final ResourceDefinitionContext OBJECTIVES = new ResourceDefinitionContext.Builder()
      .withGroup("inference.networking.x-k8s.io").withVersion("v1alpha2").withKind("InferenceObjective")
      .withPlural("inferenceobjectives").withNamespaced(true).build();

  private static final Logger log = LoggerFactory.getLogger(InferenceObjectives.class);

  private final String namespace;
  private final String pool;
  private final ClusterConnection connection;
  private final AtomicBoolean started = new AtomicBoolean();
  private volatile Map<String, Integer> priorities = Map.of();

  /**
   * Watches the objectives of InferencePool {@code namespace/pool}; {@code configs} says how to reach the API server
   * (asked again for each new client).
   */
  public InferenceObjectives(String namespace, String pool, Supplier<Config> configs, Duration idleTimeout) {
    this(namespace, pool, configs, new ClusterConnection.Options(idleTimeout,
        ClusterConnection.Options.DEFAULT.checkInterval(), KubernetesConfigs.DEFAULT_TIMEOUT));
  }

  InferenceObjectives(String namespace, String pool, Supplier<Config> configs, ClusterConnection.Options options) {
    this.namespace = Objects.requireNonNull(namespace, "namespace");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.connection = new ClusterConnection("inference-objectives/" + namespace + "/" + pool, configs, options,
        (client, changed) -> {
          SharedIndexInformer<GenericKubernetesResource> i = client.genericKubernetesResources(OBJECTIVES)
              .inNamespace(namespace).runnableInformer(0);
          i.addEventHandler(ClusterConnection.handler(changed));
          return List.of(i);
        }, this::onChange);
  }

  /** Watches the objectives of the pool {@code namespace/name}, the API server found by autodetection. */
  public static InferenceObjectives of(String namespaceSlashPool) {
    int slash = namespaceSlashPool.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("give the InferencePool as NAMESPACE/NAME, not '" + namespaceSlashPool + "'");
    }
    return new InferenceObjectives(namespaceSlashPool.substring(0, slash), namespaceSlashPool.substring(slash + 1),
        KubernetesConfigs::autodetect, ClusterConnection.Options.DEFAULT.idleTimeout());
  }

  /** Starts the informer (once). */
  public void start() {
    if (started.compareAndSet(false, true)) {
      log.info("Reading request priorities from the InferenceObjectives of InferencePool {}/{}", namespace, pool);
      connection.start();
    }
  }

  private void onChange(ClusterConnection.Generation g) {
    Map<String, Integer> next = new HashMap<>();
    for (SharedIndexInformer<?> i : g.informers) {
      for (Object o : i.getStore().list()) {
        JsonNode n = EndpointMapper.toJson(o);
        JsonNode ref = n.path("spec").path("poolRef");
        String group = ref.path("group").asText(InferencePoolSource.GROUP);
        if (!pool.equals(ref.path("name").asText()) || !(group.isEmpty() || group.equals(InferencePoolSource.GROUP))) {
          continue;
        }
        JsonNode p = n.path("spec").path("priority");
        if (p.canConvertToInt()) {
          next.put(n.path("metadata").path("name").asText(), p.asInt());
        }
      }
    }
    Map<String, Integer> copy = Map.copyOf(next);
    if (!copy.equals(priorities)) {
      log.debug("InferenceObjective priorities of {}/{} now {}", namespace, pool, copy);
      priorities = copy;
    }
  }

  /** The priority of the objective so named, or null when there is none (or it sets no priority). */
  public @Nullable Integer priority(String objective) {
    return priorities.get(objective);
  }

  @Override
  public @Nullable Integer apply(String objective) {
    return priority(objective);
  }

  /** Every known objective's priority. */
  public Map<String, Integer> priorities() {
    return priorities;
  }

  @Override
  public void close() {
    connection.close();
  }
}
