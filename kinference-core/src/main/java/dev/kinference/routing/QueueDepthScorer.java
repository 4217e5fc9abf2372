package dev.kinference.routing;

import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The queue scorer of llm-d's form, {@code (maxQ - q) / (maxQ - minQ)} over the candidates, where q is the scraped
 * waiting count plus the requests the router sent since the scrape, each of those counted at a weight ({@link
 * dev.kinference.endpoint.EndpointState#estimatedWaiting(double)}; llm-d reads the scraped count alone, weight 0).
 * Immutable and thread-safe; writes the raw values into {@code scores} before normalising them in place, so it
 * allocates nothing.
 */
public final class QueueDepthScorer implements Scorer {

  /** {@code sinceScrapeWeight}: what a request sent since the last scrape counts, against one reported waiting. */
  static final Parameter SINCE_SCRAPE_WEIGHT = Parameter.number("sinceScrapeWeight", 0.25, 0, true, 1, true,
      "what a request sent since the last scrape counts, against one the server reported waiting");

  private final double sinceScrapeWeight;

  /** The default weight, 0.25. Public for {@link java.util.ServiceLoader}. */
  public QueueDepthScorer() {
    this((Double) SINCE_SCRAPE_WEIGHT.defaultValue());
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
    this.sinceScrapeWeight = Parameters.of(List.of(SINCE_SCRAPE_WEIGHT),
        Map.of(SINCE_SCRAPE_WEIGHT.name(), sinceScrapeWeight)).number(SINCE_SCRAPE_WEIGHT.name());
  }

  @Override
  public String name() {
    return "queue-depth";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(SINCE_SCRAPE_WEIGHT);
  }

  @Override
  public Scorer create(Parameters parameters, LongSupplier ticker) {
    return new QueueDepthScorer(parameters.number(SINCE_SCRAPE_WEIGHT.name()));
  }

  @Override
  public Parameters parameters() {
    return Parameters.of(declaredParameters(), Map.of(SINCE_SCRAPE_WEIGHT.name(), sinceScrapeWeight));
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
