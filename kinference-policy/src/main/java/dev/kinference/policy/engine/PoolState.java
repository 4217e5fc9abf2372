package dev.kinference.policy.engine;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.endpoint.Saturation;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.routing.TtftModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The state of one or more pools in a fleet snapshot, as policy rules see it: the least loaded member's queue, KV
 * utilisation and predicted TTFT, and whether every member is saturated.
 *
 * @param members members in the snapshot (not draining)
 * @param healthy members that answer (the others are unreachable or failing)
 * @param available members that are healthy and not saturated
 * @param saturated whether no member is available (a pool without members is saturated)
 * @param queueDepth the smallest queue among healthy members ({@link Integer#MAX_VALUE} when none)
 * @param kvUtilization the smallest KV usage among healthy members (1 when none)
 * @param predictedTtftMs the smallest predicted TTFT among healthy members, ignoring cache hits (infinite when none)
 */
record PoolState(int members, int healthy, int available, boolean saturated, int queueDepth, double kvUtilization,
    double predictedTtftMs) {

  static PoolState of(List<InferencePool> pools, List<EndpointState> all, Saturation defaults, TtftModel ttft,
      int promptTokens, long nowNanos) {
    int members = 0;
    int healthy = 0;
    int available = 0;
    int queue = Integer.MAX_VALUE;
    double kv = 1;
    double ttftMs = Double.POSITIVE_INFINITY;
    for (EndpointState s : members(pools, all)) {
      members++;
      if (s.health() != Health.HEALTHY) {
        continue;
      }
      healthy++;
      InferencePool pool = poolOf(pools, s);
      if (!saturated(pool, s, defaults, nowNanos)) {
        available++;
      }
      queue = Math.min(queue, s.estimatedWaiting());
      kv = Math.min(kv, s.kvUsage());
      ttftMs = Math.min(ttftMs, 1000 * ttft.predictSeconds(s, promptTokens, s.blockSize(pool.spec().blockSize())));
    }
    return new PoolState(members, healthy, available, available == 0, queue, kv, ttftMs);
  }

  /** Members of any of the pools that are not draining, in snapshot order. */
  static List<EndpointState> members(List<InferencePool> pools, List<EndpointState> all) {
    List<EndpointState> out = new ArrayList<>();
    for (EndpointState s : all) {
      if (s.health() == Health.DRAINING) {
        continue;
      }
      for (InferencePool p : pools) {
        if (Target.isMember(s.endpoint(), p)) {
          out.add(s);
          break;
        }
      }
    }
    return out;
  }

  static InferencePool poolOf(List<InferencePool> pools, EndpointState s) {
    for (InferencePool p : pools) {
      if (Target.isMember(s.endpoint(), p)) {
        return p;
      }
    }
    return pools.get(0);
  }

  /** Whether a member is saturated by its pool's thresholds and concurrency cap. */
  static boolean saturated(InferencePool pool, EndpointState s, Saturation defaults, long nowNanos) {
    InferencePool.Capacity cap = pool.spec().capacity();
    if (cap != null && cap.maxConcurrentRequests() != null && s.inFlight() >= cap.maxConcurrentRequests()) {
      return true;
    }
    InferencePool.SaturationThresholds t = pool.spec().saturation();
    Saturation sat = t == null ? defaults : new Saturation(t.maxWaiting(), t.maxKvUtilization(),
        defaults.maxStaleness().isZero() ? Duration.ofMillis(200) : defaults.maxStaleness());
    return sat.isSaturated(s, nowNanos);
  }

  /** Whether this state satisfies a rule's pool condition (its pool name already resolved). */
  boolean satisfies(InferencePolicy.PoolCondition c) {
    return (c.saturated() == null || c.saturated() == saturated)
        && (c.queueDepth() == null || c.queueDepth().contains(queueDepth))
        && (c.kvUtilization() == null || c.kvUtilization().contains(kvUtilization))
        && (c.predictedTtftMs() == null || c.predictedTtftMs().contains(predictedTtftMs));
  }

  String describe() {
    if (members == 0) {
      return "no members";
    }
    if (healthy == 0) {
      // not "saturated, KV 100%": nothing answers, which is an outage, not load (regression)
      return "0/" + members + " available: " + (members == 1 ? "its member is" : "all " + members + " members are")
          + " unreachable or failing";
    }
    return available + "/" + members + " available, queue " + (queueDepth == Integer.MAX_VALUE ? "-" : queueDepth)
        + ", KV " + Math.round(kvUtilization * 100) + "%, TTFT ~" + (Double.isInfinite(predictedTtftMs) ? "-"
        : Math.round(predictedTtftMs) + " ms");
  }
}
