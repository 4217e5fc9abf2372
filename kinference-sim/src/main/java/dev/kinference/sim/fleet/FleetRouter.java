package dev.kinference.sim.fleet;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.workload.ClientRequest;

/**
 * A routing policy under test. The fleet calls it on one thread, in virtual-time order: {@link #start} once, then
 * {@link #route} for each request, {@link #onMetrics} for each scrape delivered, {@link #onKvEvents} for each event
 * batch delivered, and the decision's callbacks as the request progresses.
 */
public interface FleetRouter {

  /**
   * The server index of a decision that turns the request away at once, as a gateway's admission control answers
   * HTTP 429: the request reaches no server, and the fleet reports it as {@link CompletedRequest#rejected()} and
   * calls none of the decision's callbacks. Only open-loop loads (Poisson, replay, ladder) may be turned away.
   */
  int REJECTED = -1;

  /** The name in reports. */
  String name();

  /** Called once before the run, with the servers. */
  void start(FleetView fleet);

  /** Chooses the server for {@code request} at {@code nowNanos}. */
  Decision route(ClientRequest request, long nowNanos);

  /** A scrape of server {@code server}'s metrics, taken at {@code takenAtNanos}, delivered at {@code nowNanos}. */
  default void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {}

  /** A batch of server {@code server}'s KV events, delivered at {@code nowNanos}. */
  default void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {}

  /** Where a request went; told of its first token and its end. */
  interface Decision {

    /** The chosen server's index, or {@link #REJECTED}. */
    int server();

    /** The client received the first token at {@code nowNanos}. */
    default void onFirstToken(long nowNanos) {}

    /** The request ended at {@code nowNanos}. */
    default void onFinished(RequestOutcome outcome, long nowNanos) {}
  }
}
