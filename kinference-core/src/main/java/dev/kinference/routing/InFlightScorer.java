package dev.kinference.routing;

/**
 * Least-request: {@code (max - x) / (max - min)} over the router's own in-flight count per candidate. Stateless
 * and thread-safe.
 */
public final class InFlightScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public InFlightScorer() {}

  @Override
  public String name() {
    return "in-flight";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = context.candidate(i).inFlight();
    }
    MinMax.lessIsBetter(scores, n, scores);
  }
}
