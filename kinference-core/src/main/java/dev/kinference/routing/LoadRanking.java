package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * {@link Router#rankByLoad}: where a pooling or tokenizer request may go, least loaded first. Apart from the
 * decision's steps because such a request has no prefix to look up, score or teach. Stateless.
 */
final class LoadRanking {

  private LoadRanking() {}

  /** The policy's verdict on {@code original}, then the local, non-draining endpoints allowed, least loaded first. */
  static Router.PoolingChoice rank(InferenceRequest original, Fleet.Snapshot snap, @Nullable PolicyEngine policyEngine,
      @Nullable RandomGenerator random) {
    InferenceRequest request = original;
    Predicate<EndpointState> selector = null;
    List<String> trace = List.of();
    if (policyEngine != null) {
      switch (policyEngine.evaluate(original, snap)) {
        case PolicyVerdict.Reject r ->
            throw new RequestRejectedException(r.httpStatus(), r.reason(), r.retryAfter(), r.trace());
        case PolicyVerdict.Proceed p -> {
          request = p.request();
          selector = p.candidates();
          trace = p.trace();
        }
      }
    }
    List<EndpointState> pool = selector == null ? snap.serving(request.model()) : snap.all();
    RandomGenerator rnd = random != null ? random : ThreadLocalRandom.current();
    List<EndpointState> ranked = new ArrayList<>(pool.size());
    List<Double> load = new ArrayList<>(pool.size());
    for (EndpointState e : pool) {
      if (e.endpoint().isExternal() || e.health() == Health.DRAINING || (selector != null && !selector.test(e))) {
        continue;
      }
      ranked.add(e);
      // unhealthy endpoints after every healthy one; the random millionths break ties
      load.add((e.health() == Health.HEALTHY ? 0 : 1e9) + e.inFlight() + e.estimatedWaiting(0.5)
          + rnd.nextDouble() * 1e-3);
    }
    if (ranked.isEmpty()) {
      throw NoEndpointException.none(request.model(), selector == null && pool.isEmpty(), snap);
    }
    Integer[] order = new Integer[ranked.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingDouble(load::get));
    List<EndpointState> out = new ArrayList<>(order.length);
    for (Integer i : order) {
      out.add(ranked.get(i));
    }
    return new Router.PoolingChoice(request, out, trace);
  }
}
