package dev.kinference.routing;

/**
 * The queue scorer of llm-d's form, {@code (maxQ - q) / (maxQ - minQ)} over the candidates, where q is the scraped
 * waiting count plus the requests the router sent since the scrape, each of those counted at a weight ({@link
 * dev.kinference.endpoint.EndpointState#estimatedWaiting(double)}; llm-d reads the scraped count alone, weight 0).
 * Immutable and thread-safe; writes the raw values into {@code scores} before normalising them in place, so it
 * allocates nothing.
 */
public final class QueueDepthScorer implements Scorer {

  private final double sinceScrapeWeight;

  /**
   * Counts every request sent since the scrape as queued (weight 1). Public for {@link java.util.ServiceLoader}.
   */
  public QueueDepthScorer() {
    this(1);
  }

  /**
   * A scorer that counts a request sent since the last scrape as {@code sinceScrapeWeight} of a request the server
   * reported waiting. Min-max normalisation makes one request's difference the whole range, so at weight 1 a server
   * that was just sent a request (and most likely admitted it at its next step) scores as low as one that reported
   * it queued; at weight w one reported request outweighs up to {@code ceil(1 / w) - 1} sent since. The router's
   * TTFT prediction already counts those sends' prefill.
   *
   * @throws IllegalArgumentException unless {@code 0 <= sinceScrapeWeight <= 1}
   */
  public QueueDepthScorer(double sinceScrapeWeight) {
    if (!(sinceScrapeWeight >= 0 && sinceScrapeWeight <= 1)) {
      throw new IllegalArgumentException("sinceScrapeWeight must be in [0, 1]: " + sinceScrapeWeight);
    }
    this.sinceScrapeWeight = sinceScrapeWeight;
  }

  @Override
  public String name() {
    return "queue-depth";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = context.candidate(i).estimatedWaiting(sinceScrapeWeight);
    }
    MinMax.lessIsBetter(scores, n, scores);
  }
}
