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
 * prediction exceeds the target, and 0 everywhere otherwise (also with a single candidate).
 *
 * <p>Why: in an overloaded fleet whose servers each run first come, first served, spreading the excess evenly puts
 * every server behind, and then no request anywhere gets its first token in time. A request that will be late
 * wherever it goes delays every request queued behind it; sent to the server already furthest behind, it delays only
 * requests that were late already, and the other servers keep meeting the target for the requests that still can.
 * On eight servers at twice a long-conversation trace's rate this more than doubled the requests served within a
 * 2 s TTFT objective on the three heaviest of six traces (docs/BENCHMARKS.md, "Comparison routers on long
 * conversations"), at the cost of the slowest twentieth, which wait longer. Without the saturation condition it cost
 * Kinference's shared-prefix workload 1.3-2.4% of its peak goodput. Stateless and thread-safe.
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
    double longest = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      double t = context.predictedTtftSeconds(i);
      shortest = Math.min(shortest, t);
      longest = Math.max(longest, t);
    }
    if (!(shortest > targetSeconds)) {
      return;
    }
    for (int i = 0; i < n; i++) {
      if (context.predictedTtftSeconds(i) == longest) {
        scores[i] = 1.0;
      }
    }
  }
}
