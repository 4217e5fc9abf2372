package dev.kinference.policy.engine;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePool;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** Where a request is headed: local pools, one external provider model, or the fleet's default members. */
sealed interface Target permits Target.Pools, Target.Provider, Target.FleetDefault {

  /** The model name sent to the target. */
  String servedModel();

  /** How the target was reached, for traces, such as {@code alias chat -> pool small}. */
  String via();

  boolean isExternal();

  /** One or more pools serving {@code servedModel}. */
  record Pools(List<InferencePool> pools, String servedModel, String via) implements Target {
    public Pools {
      pools = List.copyOf(pools);
    }

    @Override
    public boolean isExternal() {
      return false;
    }

    String names() {
      return pools.stream().map(InferencePool::name).collect(Collectors.joining(", "));
    }
  }

  /** An external provider's model. */
  record Provider(ExternalProvider provider, String servedModel, String via) implements Target {
    @Override
    public boolean isExternal() {
      return true;
    }

    String endpointId() {
      return ExternalProvider.endpointId(provider.name(), servedModel);
    }
  }

  /** A model the configuration does not declare: the fleet members serving it, as the router would pick them. */
  record FleetDefault(String servedModel, String via) implements Target {
    @Override
    public boolean isExternal() {
      return false;
    }
  }

  /** Whether {@code e} belongs to {@code pool}: by its pool label, or by the pool's selector. Never external. */
  static boolean isMember(Endpoint e, InferencePool pool) {
    if (e.isExternal()) {
      return false;
    }
    if (pool.name().equals(e.label(InferencePool.POOL_LABEL))) {
      return true;
    }
    InferencePool.LabelSelector sel = pool.spec().selector();
    if (sel == null || sel.matchLabels().isEmpty()) {
      return false;
    }
    for (Map.Entry<String, String> m : sel.matchLabels().entrySet()) {
      if (!m.getValue().equals(e.label(m.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /** Candidates: members of any of the pools. Immutable and thread-safe. */
  record PoolMembers(List<InferencePool> pools) implements Predicate<EndpointState> {
    @Override
    public boolean test(EndpointState s) {
      for (InferencePool p : pools) {
        if (isMember(s.endpoint(), p)) {
          return true;
        }
      }
      return false;
    }

    @Override
    public String toString() {
      return "members of pool " + pools.stream().map(InferencePool::name).collect(Collectors.joining(", "));
    }
  }

  /** Candidates: exactly these endpoint ids. Immutable and thread-safe. */
  record EndpointIds(java.util.Set<String> ids) implements Predicate<EndpointState> {
    public EndpointIds {
      ids = java.util.Set.copyOf(ids);
    }

    @Override
    public boolean test(EndpointState s) {
      return ids.contains(s.id());
    }

    @Override
    public String toString() {
      return "endpoints " + new java.util.TreeSet<>(ids);
    }
  }
}
