package dev.kinference.sim.engine;

import java.util.Map;

/**
 * What one engine step did, for tests and tracing (see {@link SimEngineBuilder#stepObserver}).
 *
 * @param startNanos when the step was scheduled
 * @param endNanos when its forward pass ended
 * @param scheduledTokens new tokens per scheduled request id, in scheduling order (running first, then admitted)
 * @param cachedTokensOnAdmission prefix-cache hit tokens of the requests admitted from the waiting queue this step
 * @param prefillTokens tokens of prompt (or recompute) chunks
 * @param decodeTokens decode tokens (one per decoding request)
 * @param preempted ids of the requests preempted while scheduling this step
 * @param waiting waiting requests after scheduling
 * @param running running requests after scheduling
 * @param freeBlocks free blocks (including cached, evictable ones) after scheduling
 */
public record StepRecord(long startNanos, long endNanos, Map<String, Integer> scheduledTokens,
    Map<String, Integer> cachedTokensOnAdmission, int prefillTokens, int decodeTokens,
    java.util.List<String> preempted, int waiting, int running, int freeBlocks) {

  public StepRecord {
    scheduledTokens = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(scheduledTokens));
    cachedTokensOnAdmission =
        java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(cachedTokensOnAdmission));
    preempted = java.util.List.copyOf(preempted);
  }
}
