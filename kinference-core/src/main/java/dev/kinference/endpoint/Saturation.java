package dev.kinference.endpoint;

import java.time.Duration;

/**
 * When an endpoint counts as saturated: more than {@code maxWaiting} requests queued, KV usage above
 * {@code maxKvUsage}, or metrics older than {@code maxStaleness}. The defaults are llm-d's (5, 0.8, 200 ms).
 * Immutable and thread-safe.
 */
public record Saturation(int maxWaiting, double maxKvUsage, Duration maxStaleness) {

  /** llm-d's thresholds. */
  public static final Saturation DEFAULT = new Saturation(5, 0.8, Duration.ofMillis(200));

  public Saturation {
    if (maxWaiting < 0) {
      throw new IllegalArgumentException("maxWaiting must not be negative: " + maxWaiting);
    }
    if (!(maxKvUsage > 0 && maxKvUsage <= 1)) {
      throw new IllegalArgumentException("maxKvUsage must be in (0, 1]: " + maxKvUsage);
    }
    if (maxStaleness.isNegative() || maxStaleness.isZero()) {
      throw new IllegalArgumentException("maxStaleness must be positive: " + maxStaleness);
    }
  }

  /**
   * Whether {@code state} is saturated at {@code nowNanos}. The queue counts requests the router sent since the
   * last scrape; an endpoint never scraped counts as saturated only through the router's own in-flight count.
   */
  public boolean isSaturated(EndpointState state, long nowNanos) {
    if (state.health() != Health.HEALTHY) {
      return true;
    }
    EndpointMetrics m = state.metrics();
    if (m == null) {
      return state.awaitingFirstToken() > maxWaiting;
    }
    if (nowNanos - m.scrapedAtNanos() > maxStaleness.toNanos()) {
      return true;
    }
    return state.estimatedWaiting() > maxWaiting || m.kvUsage() > maxKvUsage;
  }
}
