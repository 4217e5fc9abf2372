package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import java.time.Duration;
import java.util.Objects;

/**
 * Predicts an endpoint's time to first token for a request:
 *
 * <pre>
 *   ttft = baseLatency
 *        + (pending prefill tokens ahead + this request's uncached tokens) / prefill rate
 *          * (1 + running requests * decodeInterference)
 *        + kvPressurePenalty       when the uncached blocks do not fit in the free KV blocks
 * </pre>
 *
 * The prefill rate is learned online from observed TTFTs of requests that found no queue, one rate per model and
 * hardware shared by its endpoints (see {@link EndpointState#learnPrefillRate}); until the first observation it is
 * {@link #coldStartPrefillRate()}.
 * Pending prefill comes from the router's own account and the scraped queue ({@link
 * EndpointState#estimatedPendingPrefillTokens()}). The decode term models chunked prefill sharing each engine
 * step's token budget with running decodes.
 *
 * <p>The default cold start, 10,000 tokens/s, is an 8B-class model on one L40S-class GPU (362 dense BF16 TFLOPS at
 * about 40% utilisation, 2 x 8e9 FLOPs a token); larger models or GPUs converge within a few requests.
 * Immutable and thread-safe.
 *
 * @param coldStartPrefillRate prefill tokens per second assumed before any observation
 * @param baseLatency fixed cost of a request (HTTP, template, scheduling, first decode step)
 * @param decodeInterference relative slowdown of prefill per running request
 * @param kvPressurePenalty added when the request's blocks would not fit in free KV memory (queueing or
 *     preemption follows)
 */
public record TtftModel(double coldStartPrefillRate, Duration baseLatency, double decodeInterference,
    Duration kvPressurePenalty) {

  public static final TtftModel DEFAULT =
      new TtftModel(10_000, Duration.ofMillis(20), 0.004, Duration.ofSeconds(2));

  public TtftModel {
    Objects.requireNonNull(baseLatency, "baseLatency");
    Objects.requireNonNull(kvPressurePenalty, "kvPressurePenalty");
    if (!(coldStartPrefillRate > 0)) {
      throw new IllegalArgumentException("coldStartPrefillRate must be positive: " + coldStartPrefillRate);
    }
    if (!(decodeInterference >= 0)) {
      throw new IllegalArgumentException("decodeInterference must not be negative: " + decodeInterference);
    }
    if (baseLatency.isNegative() || kvPressurePenalty.isNegative()) {
      throw new IllegalArgumentException("durations must not be negative");
    }
  }

  /** Predicted seconds to first token on {@code endpoint} for a request with {@code uncachedTokens} to prefill. */
  public double predictSeconds(EndpointState endpoint, int uncachedTokens, int blockSize) {
    double rate = endpoint.prefillTokensPerSecond(coldStartPrefillRate);
    double work = endpoint.estimatedPendingPrefillTokens() + (double) uncachedTokens;
    double seconds = baseLatency.toNanos() * 1e-9
        + work / rate * (1 + endpoint.estimatedRunning() * decodeInterference);
    EndpointMetrics m = endpoint.metrics();
    if (m != null && m.numGpuBlocks() > 0 && !Double.isNaN(m.kvUsage())) {
      double freeBlocks = (1 - m.kvUsage()) * m.numGpuBlocks();
      double needed = Math.ceil((double) uncachedTokens / Math.max(1, blockSize));
      if (needed > freeBlocks) {
        seconds += kvPressurePenalty.toNanos() * 1e-9;
      }
    }
    return seconds;
  }

  /**
   * Folds an observed TTFT into {@code endpoint}'s learned prefill rate (shared with the endpoints serving the same
   * model on the same hardware), given the work ahead of and in the request and the running and waiting requests
   * when it was dispatched. Observations with less than 64 tokens of work, or faster than the base latency, say
   * nothing about prefill and are ignored; so are those of requests that found others waiting: their TTFT includes
   * waiting for KV memory or for other requests, which this model does not describe (learning from them dragged the
   * rate of a server past its KV capacity to a few percent of its speed).
   */
  public void learn(EndpointState endpoint, long workTokens, int runningAtDispatch, int waitingAtDispatch,
      long observedTtftNanos) {
    if (waitingAtDispatch > 0) {
      return;
    }
    double prefillSeconds = observedTtftNanos * 1e-9 - baseLatency.toNanos() * 1e-9;
    if (workTokens < 64 || prefillSeconds <= 1e-4) {
      return;
    }
    double slowdown = 1 + runningAtDispatch * decodeInterference;
    endpoint.learnPrefillRate(workTokens * slowdown / prefillSeconds, coldStartPrefillRate);
  }
}
