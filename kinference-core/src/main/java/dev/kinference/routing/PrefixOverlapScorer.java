package dev.kinference.routing;

/**
 * llm-d's prefix scorer: the fraction of the prompt's blocks the endpoint holds as a leading run. Stateless and
 * thread-safe.
 */
public final class PrefixOverlapScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public PrefixOverlapScorer() {}

  @Override
  public String name() {
    return "prefix-overlap";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = fraction(context, i);
    }
  }

  /** The fraction of the prompt's blocks candidate {@code i} holds as a leading run; 0 for an empty prompt. */
  static double fraction(RoutingContext context, int i) {
    int total = context.promptBlocks(i);
    return total == 0 ? 0.0 : Math.min(1.0, (double) context.matchedBlocks(i) / total);
  }
}
