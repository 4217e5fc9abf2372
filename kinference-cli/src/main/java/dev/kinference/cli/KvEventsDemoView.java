package dev.kinference.cli;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.routing.Router;
import dev.kinference.sim.demo.RouterView;
import dev.kinference.sim.server.SimulatedFleet;
import dev.kinference.vllm.kvevents.KvEventSubscriptions;
import dev.kinference.vllm.metrics.MetricsScraper;
import java.io.Closeable;

/**
 * The demo's router as the gateway runs it: a precise prefix index fed by every server's KV events over ZeroMQ, and
 * each server's load read from its {@code /metrics}. One instance serves one demo run; not thread-safe.
 */
final class KvEventsDemoView implements RouterView {

  // as the gateway's: a hybrid model's other KV-cache groups (the default model's Mamba groups) limit each hit
  private final HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());

  @Override
  public String routerName() {
    return "kinference-precise";
  }

  @Override
  public Router.Builder configure(Router.Builder builder) {
    return builder.cacheIndex(index);
  }

  @Override
  public Closeable connect(Router router, SimulatedFleet fleet) {
    MetricsScraper scraper = MetricsScraper.builder().build().attach(router.fleet());
    KvEventSubscriptions subscriptions = KvEventSubscriptions.create(index).attach(router.fleet());
    return () -> {
      subscriptions.close();
      scraper.close();
    };
  }

  @Override
  public String describe() {
    return "precise prefix index fed by each server's KV events (ZeroMQ, vLLM's wire format), load from /metrics";
  }
}
