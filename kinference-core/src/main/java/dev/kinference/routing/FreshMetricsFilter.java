package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;

/**
 * Keeps endpoints whose metrics are younger than a bound (default 1 s, twenty scrape intervals): an endpoint whose
 * scrapes stopped may be gone. An endpoint never scraped is kept: nothing says its scrapes stopped, a scraper that
 * cannot reach it marks it unhealthy, and until its first scrape the router's own account of what it sent there
 * judges its load (regression: while a fleet started, every request went to the first endpoint scraped, and session
 * affinity kept 28 of 32 conversations there for their lifetime). Immutable and thread-safe.
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
    return m == null || nowNanos - m.scrapedAtNanos() <= maxAgeNanos;
  }
}
