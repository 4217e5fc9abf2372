package dev.kinference.sim.bench;

import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.FleetRouter;

/** A router's own count of its requests in flight per server, as a proxy or load balancer keeps it. */
final class LoadCounts {

  final int[] inFlight;

  LoadCounts(int servers) {
    this.inFlight = new int[servers];
  }

  /** Counts a request sent to {@code server} and returns a decision that releases it when it finishes. */
  FleetRouter.Decision dispatch(int server) {
    inFlight[server]++;
    return new FleetRouter.Decision() {
      @Override
      public int server() {
        return server;
      }

      @Override
      public void onFinished(RequestOutcome outcome, long nowNanos) {
        inFlight[server]--;
      }
    };
  }
}
