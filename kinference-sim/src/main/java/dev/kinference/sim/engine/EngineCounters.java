package dev.kinference.sim.engine;

import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The counters and latency histograms behind an engine's {@code /metrics} (vLLM's
 * {@code vllm/v1/metrics/loggers.py}), updated by the scheduler as it goes and reset by a restart.
 *
 * <p>Not thread-safe; owned by one engine.
 */
final class EngineCounters {

  long prefixQueries;
  long prefixHits;
  long promptTokens;
  long generationTokens;
  long preemptions;
  long steps;
  long busyNanos;
  private final EnumMap<FinishReason, Long> finished = new EnumMap<>(FinishReason.class);
  /** An immutable copy of {@link #finished} for {@link #metrics}, kept until a request finishes (scrapes are many). */
  private @Nullable Map<FinishReason, Long> finishedCopy;
  final LatencyHistogram.Accumulator ttft = new LatencyHistogram.Accumulator(LatencyHistogram.TTFT_BOUNDS);
  final LatencyHistogram.Accumulator itl = new LatencyHistogram.Accumulator(LatencyHistogram.ITL_BOUNDS);
  final LatencyHistogram.Accumulator e2e = new LatencyHistogram.Accumulator(LatencyHistogram.E2E_BOUNDS);

  void finished(FinishReason reason, double e2eSeconds) {
    finished.merge(reason, 1L, Long::sum);
    finishedCopy = null;
    e2e.record(e2eSeconds);
  }

  /** The metrics now, given the scheduler's and the pool's state. */
  EngineMetrics metrics(long now, int waiting, int running, BlockPool pool, EngineConfig config) {
    Map<FinishReason, Long> finishedNow = finishedCopy;
    if (finishedNow == null) {
      finishedNow = Map.copyOf(finished);
      finishedCopy = finishedNow;
    }
    return new EngineMetrics(now, waiting, running, pool.usage(), config.blockSize(), config.numGpuBlocks(),
        prefixQueries, prefixHits, promptTokens, generationTokens, preemptions, finishedNow, ttft.snapshot(),
        itl.snapshot(), e2e.snapshot(), pool.freeCount(), pool.cachedBlockCount(), steps, busyNanos);
  }
}
