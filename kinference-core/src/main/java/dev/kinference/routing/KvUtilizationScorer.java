package dev.kinference.routing;

import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * KV-cache headroom: {@code 1 - max(0, usage - knee) / (1 - knee)} of the scraped {@code kv_cache_usage_perc}, so
 * every endpoint below the knee scores 1 and the score falls to 0 at a full cache; 1 when unknown. Knee 0 is llm-d's
 * scorer, {@code 1 - usage}; the default, 0.5, is the default profile's (docs/ROUTING.md says why). Immutable and
 * thread-safe.
 */
public final class KvUtilizationScorer implements Scorer {

  /** {@code knee}: the KV usage below which endpoints are told apart not at all. */
  static final Parameter KNEE = Parameter.number("knee", 0.5, 0, true, 1, false,
      "KV usage below which every endpoint scores 1 (0: llm-d's 1 - usage)");

  private final double knee;

  /** The default knee, 0.5. Public for {@link java.util.ServiceLoader}. */
  public KvUtilizationScorer() {
    this((Double) KNEE.defaultValue());
  }

  /**
   * A scorer that tells endpoints apart only above {@code knee}: below it KV usage says nothing about the next
   * request's wait, and scoring it there only adds noise to the other scorers.
   *
   * @throws IllegalArgumentException unless {@code 0 <= knee < 1}
   */
  public KvUtilizationScorer(double knee) {
    this.knee = Parameters.of(List.of(KNEE), java.util.Map.of("knee", knee)).number("knee");
  }

  @Override
  public String name() {
    return "kv-utilization";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(KNEE);
  }

  @Override
  public Scorer create(Parameters parameters, LongSupplier ticker) {
    return new KvUtilizationScorer(parameters.number(KNEE.name()));
  }

  @Override
  public Parameters parameters() {
    return Parameters.of(declaredParameters(), java.util.Map.of(KNEE.name(), knee));
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      scores[i] = 1 - Math.max(0, context.candidate(i).kvUsage() - knee) / (1 - knee);
    }
  }
}
