package dev.kinference.policy.config;

import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.ObjectMeta;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Binds a {@code ModelAlias}'s spec: its weighted targets and fallbacks. Not thread-safe; one per document. */
final class AliasBinder {

  private final Binding b;

  AliasBinder(Binding b) {
    this.b = b;
  }

  ModelAlias alias(ObjectMeta meta, Fields spec) {
    String model = spec.str("model");
    List<ModelAlias.Target> targets = spec.list("targets", this::aliasTarget);
    if (!spec.has("targets")) {
      spec.missing("targets", "at least one target: {pool: NAME} or {provider: NAME, model: MODEL}");
    } else if (targets.isEmpty() && b.errors == 0) {
      b.error(spec.pos("targets"), spec.child("targets"), "at least one target is needed");
    } else if (!targets.isEmpty() && targets.stream().mapToInt(ModelAlias.Target::weight).sum() == 0) {
      b.error(spec.pos("targets"), spec.child("targets"),
          "every target has weight 0: the alias can never be served");
    }
    List<FallbackRef> fallback = spec.list("fallback", b::fallbackRef);
    spec.done();
    return new ModelAlias(meta, new ModelAlias.Spec(model == null ? meta.name() : model, targets, fallback));
  }

  private ModelAlias.@Nullable Target aliasTarget(YNode node, String path) {
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    String pool = o.str("pool");
    String provider = o.str("provider");
    String alias = o.str("alias");
    String model = o.str("model");
    Long weight = o.integer("weight", 0, 1_000_000);
    int kinds = (pool != null ? 1 : 0) + (provider != null ? 1 : 0) + (alias != null ? 1 : 0);
    if (kinds != 1 && o.errorsBefore == b.errors) {
      b.error(o.pos, o.path, kinds == 0 ? "a target needs one of pool, provider or alias"
          : "a target names exactly one of pool, provider or alias");
    }
    if (provider != null && model == null) {
      o.missing("model", "the provider's model name");
    }
    if (alias != null && model != null) {
      b.error(o.pos("model"), o.child("model"), "an alias target takes its model from the alias; remove model");
    }
    o.done();
    return new ModelAlias.Target(pool, provider, alias, model, weight == null ? 1 : weight.intValue());
  }
}
