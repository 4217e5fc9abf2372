package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How often the candidates have been preempting running requests lately, from each server's {@code
 * vllm:num_preemptions_total} counter as scraped: per endpoint, the counter's increases decayed exponentially with
 * time constant {@code tau}, so the level is about the preemptions of the last {@code tau} (a rate, without keeping
 * the scrapes). A counter that goes down (the server restarted) is taken as the new baseline, and the counter's value
 * when first seen is history, not a preemption. Thread-safe: each endpoint's level is updated under its own lock.
 */
final class PreemptionWatch {

  private final long tauNanos;
  private final Map<String, Level> levels = new ConcurrentHashMap<>();

  PreemptionWatch(long tauNanos) {
    if (tauNanos <= 0) {
      throw new IllegalArgumentException("tau must be positive: " + tauNanos);
    }
    this.tauNanos = tauNanos;
  }

  /**
   * The mean over the candidates whose servers publish the counter of their preemptions within about {@code tau}
   * before {@code nowNanos}, or {@code NaN} when none publishes it.
   */
  double recentPerEndpoint(RoutingContext context) {
    long now = context.nowNanos();
    double sum = 0;
    int known = 0;
    for (int i = 0, n = context.candidateCount(); i < n; i++) {
      EndpointState e = context.candidate(i);
      EndpointMetrics m = e.metrics();
      if (m == null || Double.isNaN(m.preemptions())) {
        continue;
      }
      sum += levels.computeIfAbsent(e.id(), id -> new Level()).observe(m.preemptions(), m.scrapedAtNanos(), now);
      known++;
    }
    return known == 0 ? Double.NaN : sum / known;
  }

  /** One endpoint's decayed count of preemptions. */
  private final class Level {
    private double lastCount = Double.NaN;
    private double level;
    private long levelAtNanos;

    synchronized double observe(double count, long scrapedAtNanos, long nowNanos) {
      if (Double.isNaN(lastCount) || count < lastCount) {
        lastCount = count;
        levelAtNanos = scrapedAtNanos;
      } else if (count > lastCount) {
        level = decayed(scrapedAtNanos) + (count - lastCount);
        levelAtNanos = Math.max(levelAtNanos, scrapedAtNanos);
        lastCount = count;
      }
      return decayed(nowNanos);
    }

    private double decayed(long atNanos) {
      long elapsed = Math.max(0, atNanos - levelAtNanos);
      return level * Math.exp(-(double) elapsed / tauNanos);
    }
  }
}
