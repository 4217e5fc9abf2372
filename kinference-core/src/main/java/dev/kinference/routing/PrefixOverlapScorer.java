package dev.kinference.routing;

/**
 * llm-d's prefix scorer: the fraction of the prompt's blocks the endpoint holds as a leading run, in its GPU cache
 * and then its offload tier (when routing credits one: {@link RoutingContext#offloadedBlocks}), so that a prefix
 * held only in one endpoint's host memory is not copied to another's as if nobody held it. Stateless and
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
    int held = context.matchedBlocks(i) + context.offloadedBlocks(i);
    return total == 0 ? 0.0 : Math.min(1.0, (double) held / total);
  }
}
