package dev.kinference.routing;

/**
 * The default scorer: {@code min predicted TTFT / predicted TTFT}, so the endpoint expected to answer first scores
 * 1 and one expected to take twice as long scores 0.5. Stateless and thread-safe.
 */
public final class PredictedTtftScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public PredictedTtftScorer() {}

  @Override
  public String name() {
    return "predicted-ttft";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    double min = Double.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, context.predictedTtftSeconds(i));
    }
    for (int i = 0; i < n; i++) {
      double t = context.predictedTtftSeconds(i);
      scores[i] = t <= 0 || min <= 0 ? 1.0 : min / t;
    }
  }
}
