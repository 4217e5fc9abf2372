package dev.kinference.sim.server;

import dev.kinference.cache.KvEvent;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the real-time server needs from an engine model: requests in, one scheduler step at a time out. The
 * {@link RealtimeEngineLoop} calls it from a single thread, so implementations need not be thread-safe.
 */
interface SteppedEngine {

  /**
   * A request for the engine.
   *
   * @param id unique per server
   * @param promptTokens the prompt's token ids
   * @param outputTokens the token ids the request will generate, in order; the engine stores their KV blocks as
   *     decoding fills them
   * @param lora the LoRA adapter, or null
   * @param cacheSalt vLLM's {@code cache_salt}, or null
   */
  @SuppressWarnings("ArrayRecordComponent") // handed over once, never compared; copies would cost per request
  record Request(long id, int[] promptTokens, int[] outputTokens, @Nullable String lora,
      @Nullable String cacheSalt) {}

  /**
   * What one request did in a step.
   *
   * @param newTokens output tokens generated in this step (0 while prefilling)
   * @param cachedPromptTokens prompt tokens found in the prefix cache when the request was first scheduled
   * @param finished whether the request generated its last token in this step
   */
  record Progress(long id, int newTokens, int cachedPromptTokens, boolean finished) {}

  /**
   * One scheduler step.
   *
   * @param seconds how long the step takes on the modelled GPU
   * @param progress the requests scheduled in this step
   * @param scheduledFirstTime ids of requests scheduled for the first time in this step (their queueing ended)
   * @param events KV-cache events of this step, in order
   * @param promptTokens prompt tokens computed (not cached) in this step
   * @param generationTokens tokens generated in this step
   * @param preemptions requests preempted in this step
   * @param prefixQueryTokens prompt tokens looked up in the prefix cache in this step
   * @param prefixHitTokens of which found
   */
  record Step(double seconds, List<Progress> progress, List<Long> scheduledFirstTime, List<KvEvent> events,
      int promptTokens, int generationTokens, int preemptions, long prefixQueryTokens, long prefixHitTokens) {}

  void add(Request request);

  /** Removes a request (client gone); unknown ids are ignored. */
  void abort(long id);

  /** Whether any request is waiting or running. */
  boolean hasWork();

  /** Runs one step at simulated time {@code nowSeconds}; only called when {@link #hasWork}. */
  Step step(double nowSeconds);

  int numRunning();

  int numWaiting();

  /** Fraction of KV blocks in use, 0..1. */
  double kvCacheUsage();

  Set<String> runningLoras();

  Set<String> waitingLoras();

  /** Drops every cached block not in use, as {@code POST /reset_prefix_cache}; returns the events that causes. */
  List<KvEvent> resetPrefixCache();

  int blockSize();

  long numGpuBlocks();
}
