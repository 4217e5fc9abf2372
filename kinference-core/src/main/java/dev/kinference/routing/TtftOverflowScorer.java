package dev.kinference.routing;

import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Once every candidate is saturated ({@link RoutingContext#everyCandidateSaturated()}), sends a request that is
 * predicted to miss {@code ttftTarget} on every candidate to the candidate furthest behind: it scores 1 on the
 * endpoint(s) with the longest predicted TTFT ({@link RoutingContext#predictedTtftSeconds}) when even the shortest
 * prediction exceeds the target, and 0 everywhere otherwise (also with a single candidate). When any candidate holds
 * part of the prompt ({@link RoutingContext#cachedTokens}), only those holding the longest cached prefix are chosen
 * from.
 *
 * <p>Why: in an overloaded fleet whose servers each run first come, first served, spreading the excess evenly puts
 * every server behind, and then no request anywhere gets its first token in time. A request that will be late
 * wherever it goes delays every request queued behind it; sent to the server already furthest behind, it delays only
 * requests that were late already, and the other servers keep meeting the target for the requests that still can.
 * On eight servers at twice a long-conversation trace's rate this more than doubled the requests served within a
 * 2 s TTFT objective on the three heaviest of six traces (docs/BENCHMARKS.md, "Comparison routers on long
 * conversations"), at the cost of the slowest twentieth, which wait longer. Without the saturation condition it cost
 * Kinference's shared-prefix workload 1.3-2.4% of its peak goodput. Choosing among every candidate, it sent
 * 18,000-token prompts away from the server holding their prefix (the one without it predicts longest because the
 * prompt has to be prefilled there again), which broke up the groups each server kept and cost that workload 9% of
 * its peak goodput; among the holders of the longest cached prefix it cost nothing there and kept most of the
 * traces' gain (docs/BENCHMARKS.md, "Long system prompts"). Stateless and thread-safe.
 */
public final class TtftOverflowScorer implements Scorer {

  /** {@code ttftTarget}: the predicted time to first token beyond which a request counts as late on an endpoint. */
  static final Parameter TTFT_TARGET = Parameter.positiveDuration("ttftTarget", Duration.ofSeconds(4),
      Duration.ofDays(1), "the predicted time to first token beyond which a request counts as late on an endpoint");

  private final double targetSeconds;
  private final Parameters parameters;

  /** The default target, 4 s. Public for {@link java.util.ServiceLoader}. */
  public TtftOverflowScorer() {
    this((Duration) TTFT_TARGET.defaultValue());
  }

  /** @param ttftTarget positive, at most a day */
  public TtftOverflowScorer(Duration ttftTarget) {
    this.parameters = Parameters.of(List.of(TTFT_TARGET), Map.of(TTFT_TARGET.name(), ttftTarget));
    this.targetSeconds = parameters.duration(TTFT_TARGET.name()).toNanos() / 1e9;
  }

  @Override
  public String name() {
    return "ttft-overflow";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(TTFT_TARGET);
  }

  @Override
  public Scorer create(Parameters given, LongSupplier ticker) {
    return new TtftOverflowScorer(given.duration(TTFT_TARGET.name()));
  }

  @Override
  public Parameters parameters() {
    return parameters;
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    Arrays.fill(scores, 0, n, 0.0);
    if (n < 2 || !context.everyCandidateSaturated()) {
      return;
    }
    double shortest = Double.POSITIVE_INFINITY;
    int longestCachedPrefix = 0;
    for (int i = 0; i < n; i++) {
      shortest = Math.min(shortest, context.predictedTtftSeconds(i));
      longestCachedPrefix = Math.max(longestCachedPrefix, context.cachedTokens(i));
    }
    if (!(shortest > targetSeconds)) {
      return;
    }
    // Among the holders of the longest cached prefix only: elsewhere the prompt's prefill is longer, so an endpoint
    // without it looks furthest behind because of the very recompute the move would cost, and evicts another prefix.
    double longest = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      if (context.cachedTokens(i) == longestCachedPrefix) {
        longest = Math.max(longest, context.predictedTtftSeconds(i));
      }
    }
    for (int i = 0; i < n; i++) {
      if (context.cachedTokens(i) == longestCachedPrefix && context.predictedTtftSeconds(i) == longest) {
        scores[i] = 1.0;
      }
    }
  }
}
