package dev.kinference.sim.fleet;

import dev.kinference.sim.workload.ClientRequest;

/** Receives a run's measurements, on the run's thread. */
public interface RunObserver {

  /** A request sent within the measurement window ended, or the run ended before it did. */
  default void onRequest(CompletedRequest request) {}

  /** A token of a measured request arrived {@code gapNanos} after the previous one. */
  default void onTokenGap(ClientRequest request, long gapNanos) {}

  /** Stage {@code stage} of a {@link dev.kinference.sim.workload.LoadPattern.Ladder} started sending at {@code nanos}. */
  default void onStageStart(int stage, long nanos) {}

  /** Virtual time progressed to {@code simNanos} of about {@code totalNanos}. */
  default void onProgress(long simNanos, long totalNanos) {}
}
