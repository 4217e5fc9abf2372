package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;

/**
 * Keeps endpoints whose metrics are younger than a bound (default 1 s, twenty scrape intervals): an endpoint whose
 * scrapes stopped may be gone. An endpoint never scraped counts as stale, so in a fleet without a scraper every
 * endpoint is stale and the filter fails open. Immutable and thread-safe.
 */
public final class FreshMetricsFilter implements Filter {

  private final long maxAgeNanos;

  public FreshMetricsFilter() {
    this(Duration.ofSeconds(1));
  }

  public FreshMetricsFilter(Duration maxAge) {
    if (maxAge.isNegative() || maxAge.isZero()) {
      throw new IllegalArgumentException("maxAge must be positive: " + maxAge);
    }
    this.maxAgeNanos = maxAge.toNanos();
  }

  @Override
  public String name() {
    return "fresh-metrics";
  }

  @Override
  public boolean accept(InferenceRequest request, EndpointState endpoint, long nowNanos) {
    EndpointMetrics m = endpoint.metrics();
    return m != null && nowNanos - m.scrapedAtNanos() <= maxAgeNanos;
  }
}
