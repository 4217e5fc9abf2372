package dev.kinference.routing;

/**
 * KV-cache headroom: {@code 1 - max(0, usage - knee) / (1 - knee)} of the scraped {@code kv_cache_usage_perc}, so
 * every endpoint below the knee scores 1 and the score falls to 0 at a full cache; 1 when unknown. With knee 0 (the
 * no-argument constructor, the one {@link java.util.ServiceLoader} finds) it is llm-d's scorer, {@code 1 - usage}.
 * Immutable and thread-safe.
 */
public final class KvUtilizationScorer implements Scorer {

  private final double knee;

  /** llm-d's scorer, {@code 1 - usage}. Public for {@link java.util.ServiceLoader}. */
  public KvUtilizationScorer() {
    this(0);
  }

  /**
   * A scorer that tells endpoints apart only above {@code knee}: below it KV usage says nothing about the next
   * request's wait, and scoring it there only adds noise to the other scorers.
   *
   * @throws IllegalArgumentException unless {@code 0 <= knee < 1}
   */
  public KvUtilizationScorer(double knee) {
    if (!(knee >= 0 && knee < 1)) {
      throw new IllegalArgumentException("knee must be in [0, 1): " + knee);
    }
    this.knee = knee;
  }

  @Override
  public String name() {
    return "kv-utilization";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = 1 - Math.max(0, context.candidate(i).kvUsage() - knee) / (1 - knee);
    }
  }
}
