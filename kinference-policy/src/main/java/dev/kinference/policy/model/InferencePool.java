package dev.kinference.policy.model;

import dev.kinference.routing.RoutingProfile;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A set of endpoints serving one model: a static list, or the endpoints a discovery source finds with a label
 * selector. At run time an endpoint belongs to the pool when its label {@value #POOL_LABEL} names the pool, or when
 * the pool has a selector and the endpoint's labels contain all of {@code matchLabels}.
 */
public record InferencePool(ObjectMeta metadata, Spec spec) implements Resource {

  public static final String KIND = "InferencePool";

  /** The endpoint label naming the pool an endpoint belongs to. */
  public static final String POOL_LABEL = "kinference.dev/pool";

  public InferencePool {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(spec, "spec");
  }

  @Override
  public String kind() {
    return KIND;
  }

  /**
   * @param model the served model name, as the servers know it (for example {@code Qwen/Qwen3-8B})
   * @param endpoints static members; empty when a selector is used
   * @param selector members found by discovery; null when the list is static
   * @param blockSize tokens per KV block, when servers do not report it (default 16)
   * @param capacity capacity hints, or null
   * @param saturation when a member counts as saturated, or null for the defaults (5 waiting, 80% KV)
   * @param price internal price of this pool's tokens (charge-back), or null for free
   * @param routing how the router scores this pool's endpoints, or null for the default profile
   */
  public record Spec(String model, List<StaticEndpoint> endpoints, @Nullable LabelSelector selector, int blockSize,
      @Nullable Capacity capacity, @Nullable SaturationThresholds saturation, @Nullable Price price,
      @Nullable Routing routing) {
    public Spec {
      Objects.requireNonNull(model, "model");
      endpoints = List.copyOf(endpoints);
    }
  }

  /**
   * @param id the endpoint id; null means {@code host:port} of the URL
   * @param url the server's base URL, such as {@code http://10.0.0.7:8000}
   * @param labels extra endpoint labels (zone, KV-event address)
   */
  public record StaticEndpoint(@Nullable String id, String url, Map<String, String> labels) {
    public StaticEndpoint {
      Objects.requireNonNull(url, "url");
      labels = Map.copyOf(labels);
    }
  }

  /** Kubernetes' equality-based selector. */
  public record LabelSelector(Map<String, String> matchLabels) {
    public LabelSelector {
      matchLabels = Map.copyOf(matchLabels);
    }
  }

  /**
   * Capacity hints.
   *
   * @param maxConcurrentRequests requests one endpoint serves at once; an endpoint with this many in flight counts
   *     as saturated. Null: no cap.
   * @param replicas the number of endpoints expected; informational (shown by {@code kinference check --explain})
   */
  public record Capacity(@Nullable Integer maxConcurrentRequests, @Nullable Integer replicas) {}

  /**
   * How the router scores the requests for this pool's model ({@code spec.routing}).
   *
   * @param profile the scorers, weights and parameters ({@code spec.routing.profile.scorers}), every parameter
   *     written out (defaults included)
   */
  public record Routing(RoutingProfile profile) {
    public Routing {
      Objects.requireNonNull(profile, "profile");
    }
  }

  /**
   * When a member counts as saturated (see {@link dev.kinference.endpoint.Saturation}).
   *
   * @param maxWaiting more queued requests than this saturate
   * @param maxKvUtilization KV-cache usage above this (0..1] saturates
   */
  public record SaturationThresholds(int maxWaiting, double maxKvUtilization) {}
}
