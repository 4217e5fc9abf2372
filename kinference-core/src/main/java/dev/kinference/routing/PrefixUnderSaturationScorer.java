package dev.kinference.routing;

/**
 * Prefix overlap that counts only while every candidate is saturated ({@link RoutingContext#saturation()}): the
 * fraction of the prompt's blocks the endpoint holds as a leading run then, 0 for every endpoint otherwise. Added to
 * {@link PrefixOverlapScorer}, it makes cache hits weigh more once the fleet has no idle capacity left, where a
 * miss's prefill delays every request queued behind it too, which one request's predicted TTFT does not count.
 * Stateless and thread-safe.
 */
public final class PrefixUnderSaturationScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public PrefixUnderSaturationScorer() {}

  @Override
  public String name() {
    return "prefix-under-saturation";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    boolean allSaturated = context.everyCandidateSaturated();
    for (int i = 0; i < n; i++) {
      scores[i] = allSaturated ? PrefixOverlapScorer.fraction(context, i) : 0.0;
    }
  }
}
