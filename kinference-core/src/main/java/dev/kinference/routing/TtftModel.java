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
 *        + ((pending prefill tokens ahead + this request's uncached tokens) / prefill rate
 *           + attentionSecondsPerTokenPair x uncached x (cached + (uncached + 1) / 2))
 *          * (1 + running requests * decodeInterference)
 *        + kvPressurePenalty       when the uncached blocks do not fit in the free KV blocks
 * </pre>
 *
 * The attention term is what makes prefill grow faster than linearly with context: each new token attends to the
 * cached prefix and to the new tokens before it, so a 50,000-token prompt costs far more than 50 times a 1,000-token
 * one. Its coefficient is the roofline's, from the model's shape and the GPU's FLOP/s ({@link
 * #attentionSecondsPerTokenPair(int, int, int, double, double)}, as published roofline analyses of attention
 * count it: {@code 4 x query heads x head dim} FLOPs per query-key pair per attention layer, two matrix multiplies
 * of multiply-adds). The learned prefill rate is the rate of everything else (the weights' matrix multiplies), so
 * the attention time of the observed request is taken out of an observation before it is learned from; a model
 * that sets the coefficient to 0 predicts linearly, as before.
 *
 * <p>The prefill rate is learned online from observed TTFTs of requests that found no queue, one rate per model and
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
 * @param attentionSecondsPerTokenPair seconds of attention per (new token, context token) pair over all attention
 *     layers; 0 predicts prefill as linear in its tokens
 */
public record TtftModel(double coldStartPrefillRate, Duration baseLatency, double decodeInterference,
    Duration kvPressurePenalty, double attentionSecondsPerTokenPair) {

  /**
   * The default: the cold-start rate above, and attention for the same class of deployment, Llama-3.1-8B's shape
   * (32 layers, 32 query heads of dimension 128) on 362 dense BF16 TFLOPS at 40% utilisation: 3.6 ns a pair, so a
   * cold 50,000-token prompt predicts 5.0 s of linear work plus 4.5 s of attention.
   */
  public static final TtftModel DEFAULT = new TtftModel(10_000, Duration.ofMillis(20), 0.004,
      Duration.ofSeconds(2), attentionSecondsPerTokenPair(32, 32, 128, 362e12, 0.4));

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
    if (!(attentionSecondsPerTokenPair >= 0) || Double.isInfinite(attentionSecondsPerTokenPair)) {
      throw new IllegalArgumentException(
          "attentionSecondsPerTokenPair must be finite and not negative: " + attentionSecondsPerTokenPair);
    }
  }

  /**
   * The roofline's attention cost per (new token, context token) pair: {@code 4 x queryHeads x headDim x
   * attentionLayers} FLOPs (scores and the weighted sum of values, a multiply-add each) at {@code peakFlops x
   * efficiency}. For a tensor-parallel deployment pass the heads one GPU holds.
   *
   * @param attentionLayers layers with full attention (a hybrid model's linear-attention layers cost linearly)
   * @param queryHeads query heads per layer
   * @param headDim dimension of one head
   * @param peakFlops the GPU's dense tensor FLOP/s for the attention's data type (BF16 for a BF16 KV cache)
   * @param efficiency fraction of the peak the attention kernels reach, in (0, 1]
   */
  public static double attentionSecondsPerTokenPair(int attentionLayers, int queryHeads, int headDim,
      double peakFlops, double efficiency) {
    if (attentionLayers < 0 || queryHeads < 1 || headDim < 1) {
      throw new IllegalArgumentException("invalid attention shape: " + attentionLayers + " layers, " + queryHeads
          + " heads of " + headDim);
    }
    if (!(peakFlops > 0) || !(efficiency > 0 && efficiency <= 1)) {
      throw new IllegalArgumentException("peakFlops must be positive and efficiency in (0, 1]: " + peakFlops + ", "
          + efficiency);
    }
    return 4.0 * queryHeads * headDim * attentionLayers / (peakFlops * efficiency);
  }

  /** This model with another attention coefficient (0 for linear prefill). */
  public TtftModel withAttentionSecondsPerTokenPair(double seconds) {
    return new TtftModel(coldStartPrefillRate, baseLatency, decodeInterference, kvPressurePenalty, seconds);
  }

  /** Seconds of attention to prefill {@code uncachedTokens} new tokens after {@code cachedTokens} cached ones. */
  public double attentionSeconds(int uncachedTokens, int cachedTokens) {
    double n = Math.max(0, uncachedTokens);
    return attentionSecondsPerTokenPair * n * (Math.max(0, cachedTokens) + (n + 1) / 2);
  }

  /**
   * Predicted seconds to first token on {@code endpoint} for a request with {@code uncachedTokens} to prefill and
   * nothing cached: as {@link #predictSeconds(EndpointState, int, int, int)} with no cached prefix.
   */
  public double predictSeconds(EndpointState endpoint, int uncachedTokens, int blockSize) {
    return predictSeconds(endpoint, uncachedTokens, 0, blockSize);
  }

  /**
   * Predicted seconds to first token on {@code endpoint} for a request with {@code uncachedTokens} to prefill after
   * a cached prefix of {@code cachedTokens}, which its new tokens attend to.
   */
  public double predictSeconds(EndpointState endpoint, int uncachedTokens, int cachedTokens, int blockSize) {
    double rate = endpoint.prefillTokensPerSecond(coldStartPrefillRate);
    double work = endpoint.estimatedPendingPrefillTokens() + (double) uncachedTokens;
    double seconds = baseLatency.toNanos() * 1e-9
        + (work / rate + attentionSeconds(uncachedTokens, cachedTokens))
            * (1 + endpoint.estimatedRunning() * decodeInterference);
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
   * rate of a server past its KV capacity to a few percent of its speed). The request's own attention time
   * ({@code uncachedTokens} after {@code cachedTokens}) is taken out first, so the rate learned from short prompts
   * predicts long ones.
   */
  public void learn(EndpointState endpoint, long workTokens, int uncachedTokens, int cachedTokens,
      int runningAtDispatch, int waitingAtDispatch, long observedTtftNanos) {
    if (waitingAtDispatch > 0) {
      return;
    }
    double slowdown = 1 + runningAtDispatch * decodeInterference;
    double prefillSeconds = observedTtftNanos * 1e-9 - baseLatency.toNanos() * 1e-9;
    double linearSeconds = prefillSeconds - attentionSeconds(uncachedTokens, cachedTokens) * slowdown;
    if (workTokens < 64 || prefillSeconds <= 1e-4 || linearSeconds <= 0.1 * prefillSeconds) {
      return;
    }
    endpoint.learnPrefillRate(workTokens * slowdown / linearSeconds, coldStartPrefillRate);
  }
}
