package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineMetrics;
import org.jspecify.annotations.Nullable;

/** The last scraped metrics of each server, as a router's metrics store keeps them. */
final class ScrapedState {

  private final @Nullable EngineMetrics[] last;

  ScrapedState(int servers) {
    this.last = new EngineMetrics[servers];
  }

  void update(int server, EngineMetrics metrics) {
    last[server] = metrics;
  }

  /** {@code vllm:num_requests_waiting}, 0 before the first scrape. */
  int waiting(int server) {
    EngineMetrics m = last[server];
    return m == null ? 0 : m.waiting();
  }

  /** {@code vllm:kv_cache_usage_perc}, 0 before the first scrape. */
  double kvUsage(int server) {
    EngineMetrics m = last[server];
    return m == null ? 0 : m.kvCacheUsage();
  }
}
