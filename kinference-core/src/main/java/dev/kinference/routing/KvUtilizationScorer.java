package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;

/** llm-d's KV-cache utilisation scorer: {@code 1 - kv_cache_usage_perc}; 1 when unknown. Stateless, thread-safe. */
public final class KvUtilizationScorer implements Scorer {

  /** Public for {@link java.util.ServiceLoader}. */
  public KvUtilizationScorer() {}

  @Override
  public String name() {
    return "kv-utilization";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    for (int i = 0; i < n; i++) {
      EndpointMetrics m = context.candidate(i).metrics();
      double usage = m == null || Double.isNaN(m.kvUsage()) ? 0 : m.kvUsage();
      scores[i] = Math.max(0, Math.min(1, 1 - usage));
    }
  }
}
