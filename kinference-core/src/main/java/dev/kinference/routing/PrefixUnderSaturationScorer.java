package dev.kinference.routing;

/**
 * Prefix overlap that counts once most of the fleet is saturated: the fraction of the prompt's blocks the endpoint
 * holds as a leading run, times {@code max(0, 2s - 1)} where {@code s} is the share of the candidates that are
 * saturated ({@link RoutingContext#saturatedShare()}). So it is 0 for every endpoint while at most half the
 * candidates are saturated, and the plain fraction once all are. Added to {@link PrefixOverlapScorer}, it makes
 * cache hits weigh more the less idle capacity the fleet has left: there a miss's prefill delays every request
 * queued behind it too, which one request's predicted TTFT does not count, and a conversation moved off its
 * saturated server carries its re-prefill to the servers that still keep up until they are saturated as well.
 * Counted only once every candidate was saturated, an overloaded fleet with one server momentarily below the
 * thresholds sent long cached conversations there and lost 2-18% of its goodput (docs/ROUTING.md). Stateless and
 * thread-safe.
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
    double weight = weight(context.saturatedShare());
    for (int i = 0; i < n; i++) {
      scores[i] = weight == 0 ? 0.0 : weight * PrefixOverlapScorer.fraction(context, i);
    }
  }

  /** 0 up to half the candidates saturated, rising linearly to 1 when all are. */
  static double weight(double saturatedShare) {
    return Math.max(0.0, 2 * saturatedShare - 1);
  }
}
