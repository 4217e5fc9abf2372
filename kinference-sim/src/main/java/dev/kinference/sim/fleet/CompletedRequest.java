package dev.kinference.sim.fleet;

import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.workload.ClientRequest;
import org.jspecify.annotations.Nullable;

/**
 * One measured request as its client saw it. Times are virtual nanoseconds; TTFT and end-to-end latency count from
 * the client's send, so they include routing and the server's queue.
 *
 * @param request the request
 * @param server the server it was routed to
 * @param sentNanos when the client sent it
 * @param firstTokenNanos when the client got the first token, or -1
 * @param finishNanos when it ended, or -1 if the run ended first
 * @param outcome the server's account (usage, cached tokens, preemptions), or null if unfinished
 * @param maxTokenGapNanos the longest pause between two of its tokens
 */
public record CompletedRequest(ClientRequest request, int server, long sentNanos, long firstTokenNanos,
    long finishNanos, @Nullable RequestOutcome outcome, long maxTokenGapNanos) {

  /** Whether it finished within the run. */
  public boolean finished() {
    return outcome != null;
  }

  /** Time to first token, or -1. */
  public long ttftNanos() {
    return firstTokenNanos < 0 ? -1 : firstTokenNanos - sentNanos;
  }

  /** Send to end, or -1. */
  public long e2eNanos() {
    return finishNanos < 0 ? -1 : finishNanos - sentNanos;
  }
}
