package dev.kinference.examples.customscorer;

import dev.kinference.routing.RoutingContext;
import dev.kinference.routing.Scorer;

/**
 * Prefers endpoints in the caller's zone: 1 for an endpoint whose {@code zone} label equals the request's
 * {@code x-zone} header, 0 otherwise (and 0 everywhere without the header). Weighted with the default
 * {@code predicted-ttft} scorer, it keeps traffic in-zone unless another zone is clearly faster.
 *
 * <p>Registered in {@code META-INF/services} and in {@code module-info.java}, so
 * {@code Router.builder().scorer("zone-affinity", 0.5)} finds it on the class path and on the module path.
 * Stateless and thread-safe.
 */
public final class ZoneAffinityScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public ZoneAffinityScorer() {}

  @Override
  public String name() {
    return "zone-affinity";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    String zone = context.request().header("x-zone");
    for (int i = 0; i < context.candidateCount(); i++) {
      scores[i] = zone != null && zone.equals(context.candidate(i).endpoint().label("zone")) ? 1.0 : 0.0;
    }
  }
}
