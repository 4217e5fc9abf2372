package dev.kinference.routing;

/**
 * llm-d's queue scorer: {@code (maxQ - q) / (maxQ - minQ)} over the candidates, where q is the scraped waiting
 * count plus what the router sent since. Stateless and thread-safe; writes the raw values into {@code scores}
 * before normalising them in place, so it allocates nothing.
 */
public final class QueueDepthScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public QueueDepthScorer() {}

  @Override
  public String name() {
    return "queue-depth";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = context.candidate(i).estimatedWaiting();
    }
    MinMax.lessIsBetter(scores, n, scores);
  }
}
