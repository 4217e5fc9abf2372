package dev.kinference.sim.engine;

/**
 * How a request ended, with the usage vLLM reports and its timings in the engine's clock.
 *
 * @param requestId the request's id
 * @param reason why it ended
 * @param promptTokens prompt tokens
 * @param completionTokens output tokens generated
 * @param cachedTokens prompt tokens served from the prefix cache when it was first scheduled (vLLM's
 *     {@code prompt_tokens_details.cached_tokens})
 * @param arrivalNanos when it was submitted
 * @param firstTokenNanos when its first token was produced, or -1 if none was
 * @param finishNanos when it ended
 * @param preemptions how many times it was preempted (and recomputed)
 */
public record RequestOutcome(String requestId, FinishReason reason, int promptTokens, int completionTokens,
    int cachedTokens, long arrivalNanos, long firstTokenNanos, long finishNanos, int preemptions) {

  /** Time to first token, or -1 if there was none. */
  public long ttftNanos() {
    return firstTokenNanos < 0 ? -1 : firstTokenNanos - arrivalNanos;
  }

  /** Arrival to end. */
  public long e2eNanos() {
    return finishNanos - arrivalNanos;
  }
}
