package dev.kinference.policy.engine;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Where a request's model name leads: an alias's weighted pick (sticky per session), the pools serving the model, or
 * the fleet members serving it; and a fallback list as endpoint ids. Not thread-safe; one per evaluation.
 */
final class TargetResolver {

  private final YamlPolicyEngine engine;
  private final PolicyConfig config;
  private final InferenceRequest request;
  private final Fleet.Snapshot fleet;

  TargetResolver(YamlPolicyEngine engine, PolicyConfig config, InferenceRequest request, Fleet.Snapshot fleet) {
    this.engine = engine;
    this.config = config;
    this.request = request;
    this.fleet = fleet;
  }

  /**
   * Resolves a requested model name to a target: an alias (weighted pick), the pools serving it, or the fleet's
   * members serving it when the configuration does not know it. With {@code localOnly}, external targets are
   * skipped.
   */
  @Nullable Target resolve(String model, boolean localOnly, String via) {
    ModelAlias alias = config.aliasFor(model);
    if (alias != null) {
      return pick(alias, localOnly, via, new HashSet<>());
    }
    List<InferencePool> pools = config.poolsServing(model);
    if (!pools.isEmpty()) {
      return new Target.Pools(pools, model, via + " -> pool " + pools.stream().map(InferencePool::name)
          .collect(Collectors.joining(", ")));
    }
    if (!fleet.serving(model).isEmpty() || (config.aliases().isEmpty() && config.pools().isEmpty())) {
      return new Target.FleetDefault(model, via + " -> fleet members serving it (not in the configuration)");
    }
    return null;
  }

  @Nullable Target pick(ModelAlias alias, boolean localOnly, String via, Set<String> seen) {
    if (!seen.add(alias.name())) {
      return null;
    }
    List<ModelAlias.Target> options = new ArrayList<>();
    long total = 0;
    for (ModelAlias.Target t : alias.spec().targets()) {
      if (t.weight() <= 0 || (localOnly && !isLocal(t, new HashSet<>(seen)))) {
        continue;
      }
      options.add(t);
      total += t.weight();
    }
    if (options.isEmpty()) {
      return null;
    }
    long point = chooser(alias.name(), total);
    ModelAlias.Target chosen = options.get(options.size() - 1);
    for (ModelAlias.Target t : options) {
      point -= t.weight();
      if (point < 0) {
        chosen = t;
        break;
      }
    }
    String share = options.size() > 1 ? " (weight " + chosen.weight() + " of " + total + ")" : "";
    String here = (via.isEmpty() ? "" : via + " -> ") + "alias " + alias.name();
    if (chosen.pool() != null) {
      InferencePool p = config.pool(chosen.pool());
      if (p == null) {
        return null;
      }
      String served = chosen.model() != null ? chosen.model() : p.spec().model();
      return new Target.Pools(List.of(p), served, here + " -> pool " + p.name() + share);
    }
    if (chosen.provider() != null) {
      ExternalProvider p = config.provider(chosen.provider());
      if (p == null || chosen.model() == null) {
        return null;
      }
      return new Target.Provider(p, chosen.model(), here + " -> provider " + p.name() + "/" + chosen.model() + share);
    }
    ModelAlias next = chosen.alias() == null ? null : config.alias(chosen.alias());
    return next == null ? null : pick(next, localOnly, here + share, seen);
  }

  private boolean isLocal(ModelAlias.Target t, Set<String> seen) {
    if (t.pool() != null) {
      return true;
    }
    if (t.alias() == null) {
      return false;
    }
    ModelAlias a = config.alias(t.alias());
    if (a == null || !seen.add(a.name())) {
      return false;
    }
    for (ModelAlias.Target inner : a.spec().targets()) {
      if (inner.weight() > 0 && isLocal(inner, seen)) {
        return true;
      }
    }
    return false;
  }

  /** A point in [0, total): sticky per session when the request has a session id, else random. */
  private long chooser(String salt, long total) {
    String session = request.sessionId();
    if (session != null) {
      long h = (session + "\u0000" + salt).hashCode() * 0x9E3779B97F4A7C15L;
      return Math.floorMod(h ^ (h >>> 29), total);
    }
    return engine.random().nextLong(total);
  }


  /** The target of a rule's {@code route: {alias}}. */
  @Nullable Target routeAlias(String name) {
    ModelAlias a = config.alias(name);
    return a == null ? null : pick(a, false, "", new HashSet<>());
  }

  /** The target of a rule's {@code route: {pool}}. */
  @Nullable Target routePool(@Nullable String name) {
    InferencePool p = name == null ? null : config.pool(name);
    if (p == null) {
      return null;
    }
    return new Target.Pools(List.of(p), p.spec().model(), "pool " + p.name());
  }

  // ---- the verdict ----------------------------------------------------------------------------------------------

  /** The endpoint ids of {@code fallback}, in order, less the members of {@code t}'s own pools. */
  List<String> fallbackIds(List<FallbackRef> fallback, Target t) {
    LinkedHashSet<String> ids = new LinkedHashSet<>();
    expand(fallback, ids, new HashSet<>());
    if (t instanceof Target.Pools tp) {
      for (EndpointState s : PoolState.members(tp.pools(), fleet.all())) {
        ids.remove(s.id());
      }
    }
    return new ArrayList<>(ids);
  }

  private void expand(List<FallbackRef> refs, Set<String> out, Set<String> seen) {
    for (FallbackRef f : refs) {
      if (f.provider() != null && f.model() != null) {
        out.add(ExternalProvider.endpointId(f.provider(), f.model()));
      } else if (f.alias() != null && seen.add(f.alias())) {
        ModelAlias a = config.alias(f.alias());
        if (a == null) {
          continue;
        }
        for (ModelAlias.Target t : a.spec().targets()) {
          if (t.provider() != null && t.model() != null) {
            out.add(ExternalProvider.endpointId(t.provider(), t.model()));
          } else if (t.pool() != null && config.pool(t.pool()) != null) {
            InferencePool p = java.util.Objects.requireNonNull(config.pool(t.pool()));
            for (EndpointState s : PoolState.members(List.of(p), fleet.all())) {
              if (s.health() == Health.HEALTHY) {
                out.add(s.id());
              }
            }
          } else if (t.alias() != null) {
            expand(List.of(FallbackRef.alias(t.alias())), out, seen);
          }
        }
        expand(a.spec().fallback(), out, seen);
      }
    }
  }
}
