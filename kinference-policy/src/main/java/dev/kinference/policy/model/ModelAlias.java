package dev.kinference.policy.model;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A public model name mapped to weighted targets. A request for {@link Spec#model()} goes to one target, chosen by
 * weight (sticky per session when the request has a session id); its fallback chain is used when the target is
 * saturated or fails.
 */
public record ModelAlias(ObjectMeta metadata, Spec spec) implements Resource {

  public static final String KIND = "ModelAlias";

  public ModelAlias {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(spec, "spec");
  }

  @Override
  public String kind() {
    return KIND;
  }

  /** The public model name clients send. */
  public String publicModel() {
    return spec.model();
  }

  /**
   * @param model the public model name; defaults to {@code metadata.name}
   * @param targets one or more weighted targets
   * @param fallback tried in order when local capacity is saturated or a target fails
   */
  public record Spec(String model, List<Target> targets, List<FallbackRef> fallback) {
    public Spec {
      Objects.requireNonNull(model, "model");
      targets = List.copyOf(targets);
      fallback = List.copyOf(fallback);
    }
  }

  /**
   * Exactly one of {@code pool}, {@code provider} or {@code alias}.
   *
   * @param pool an {@link InferencePool}
   * @param provider an {@link ExternalProvider}; {@code model} then names one of its models
   * @param alias another alias, resolved in turn
   * @param model the served model name sent to the target; for a pool, defaults to the pool's model
   * @param weight relative share of requests, 0 or more (default 1)
   */
  public record Target(@Nullable String pool, @Nullable String provider, @Nullable String alias,
      @Nullable String model, int weight) {

    @Override
    public String toString() {
      if (pool != null) {
        return "pool " + pool + (model != null ? " (" + model + ")" : "");
      }
      return provider != null ? "provider " + provider + "/" + model : "alias " + alias;
    }
  }
}
