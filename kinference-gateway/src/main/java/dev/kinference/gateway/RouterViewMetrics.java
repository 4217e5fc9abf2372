package dev.kinference.gateway;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The router's view of each endpoint as gauges read at scrape time: the queue and running requests it estimates,
 * the prompt tokens in its prefill (this replica's and the others'), the KV-cache usage the server last reported,
 * the prefix blocks the cache index remembers for it, and its health.
 * These are the figures routing decides on, so a dashboard can put a decision beside what the router saw.
 */
final class RouterViewMetrics {

  private RouterViewMetrics() {}

  static void register(Metrics registry, Fleet fleet, @Nullable CacheIndex cacheIndex) {
    registry.gauge("kinference_gateway_endpoint_waiting",
        "Requests the router estimates are queued on the endpoint (the server's last report plus what was sent since).",
        out -> each(fleet, e -> out.accept(sample(e, e.estimatedWaiting()))), "endpoint");
    registry.gauge("kinference_gateway_endpoint_running",
        "Requests the router estimates are running on the endpoint.",
        out -> each(fleet, e -> out.accept(sample(e, e.estimatedRunning()))), "endpoint");
    registry.gauge("kinference_gateway_endpoint_kv_cache_usage_ratio",
        "KV-cache usage (0 to 1) the endpoint last reported.",
        out -> each(fleet, e -> out.accept(sample(e, e.kvUsage()))), "endpoint");
    // what several replicas share through the state store (PeerPrefillSharing): peers stays 0 for a replica alone
    registry.gauge("kinference_gateway_endpoint_pending_prefill_tokens",
        "Uncached prompt tokens sent to the endpoint that await a first token: this replica's own, and the other "
            + "replicas' as they last shared them through the state store.",
        out -> each(fleet, e -> {
          out.accept(new Metrics.Gauge.Sample(List.of(e.id(), "own"), Math.max(0, e.pendingPrefillTokens())));
          out.accept(new Metrics.Gauge.Sample(List.of(e.id(), "peers"), e.peerPendingPrefillTokens()));
        }), "endpoint", "source");
    if (cacheIndex != null) {
      registry.gauge("kinference_gateway_endpoint_indexed_blocks",
          "Prefix-cache blocks the router's cache index remembers for the endpoint.", out -> each(fleet, e -> {
            int blocks = indexedBlocks(cacheIndex, e);
            if (blocks >= 0) {
              out.accept(sample(e, blocks));
            }
          }), "endpoint");
    }
    registry.gauge("kinference_gateway_endpoint_health",
        "1 for the endpoint's health state as the router sees it (healthy, unhealthy, draining).",
        out -> each(fleet, e -> out.accept(new Metrics.Gauge.Sample(
            List.of(e.id(), e.health().name().toLowerCase(Locale.ROOT)), 1))), "endpoint", "state");
  }

  /** The blocks remembered for the endpoint, or -1 for an index that does not count them. */
  private static int indexedBlocks(CacheIndex index, EndpointState e) {
    return switch (index) {
      case ApproximateCacheIndex a -> a.blockCount(e);
      case PreciseCacheIndex p -> p.blockCount(e);
      default -> -1;
    };
  }

  private static Metrics.Gauge.Sample sample(EndpointState e, double value) {
    return new Metrics.Gauge.Sample(List.of(e.id()), value);
  }

  private static void each(Fleet fleet, java.util.function.Consumer<EndpointState> action) {
    for (EndpointState e : fleet.endpoints()) {
      if (!e.endpoint().isExternal()) {
        action.accept(e);
      }
    }
  }
}
