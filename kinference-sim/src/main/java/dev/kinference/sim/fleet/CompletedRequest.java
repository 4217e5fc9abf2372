package dev.kinference.sim.fleet;

import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.workload.ClientRequest;
import org.jspecify.annotations.Nullable;

/**
 * One measured request as its client saw it. Times are virtual nanoseconds; TTFT and end-to-end latency count from
 * the client's send, so they include routing and the server's queue.
 *
 * @param request the request
 * @param server the server it was routed to, or {@link FleetRouter#REJECTED} if the router turned it away
 * @param sentNanos when the client sent it
 * @param firstTokenNanos when the client got the first token, or -1
 * @param finishNanos when it ended, or -1 if the run ended first
 * @param outcome the server's account (usage, cached tokens, preemptions), or null if unfinished
 * @param maxTokenGapNanos the longest pause between two of its tokens
 * @param observedUntilNanos when its client last looked: its end, or the end of the run (or the demo's cancel) for
 *     a request that did not end; bounds from below how long an unstarted request waited for its first token
 */
public record CompletedRequest(ClientRequest request, int server, long sentNanos, long firstTokenNanos,
    long finishNanos, @Nullable RequestOutcome outcome, long maxTokenGapNanos, long observedUntilNanos) {

  /** A request observed until its last event (its end, its first token, or its send). */
  public CompletedRequest(ClientRequest request, int server, long sentNanos, long firstTokenNanos, long finishNanos,
      @Nullable RequestOutcome outcome, long maxTokenGapNanos) {
    this(request, server, sentNanos, firstTokenNanos, finishNanos, outcome, maxTokenGapNanos,
        Math.max(sentNanos, Math.max(firstTokenNanos, finishNanos)));
  }

  /**
   * A request the router turned away at {@code nanos} (its send): it reached no server and ended there, without a
   * first token, as a client sees an HTTP 429.
   */
  public static CompletedRequest rejected(ClientRequest request, long nanos) {
    return new CompletedRequest(request, FleetRouter.REJECTED, nanos, -1, nanos, null, 0, nanos);
  }

  /** Whether the router turned it away ({@link #rejected(ClientRequest, long)}). */
  public boolean rejected() {
    return server == FleetRouter.REJECTED;
  }

  /** Whether its first token arrived within the run. */
  public boolean started() {
    return firstTokenNanos >= 0;
  }

  /**
   * Its time to first token, or, if none came within the run, the time it waited until the run ended: a censored
   * value, a lower bound on the TTFT it would have had. Percentiles over this count every request, so that requests
   * a saturated fleet never starts make the figures worse instead of dropping out of them.
   */
  public long ttftOrWaitNanos() {
    return started() ? ttftNanos() : Math.max(0, observedUntilNanos - sentNanos);
  }

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
