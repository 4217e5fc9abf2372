package dev.kinference.sim.fleet;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.sim.engine.SimEngine;
import java.util.List;

/** The servers of a run, as a router is introduced to them. */
public interface FleetView {

  /** The servers' endpoints, in server-index order (ids {@code sim-0}, {@code sim-1}, ...). */
  List<Endpoint> endpoints();

  /** The served model name. */
  String model();

  /**
   * The engine behind server {@code i}: true, instantaneous state. Only the oracle may read it; every other router
   * must use scraped metrics and delayed KV events.
   */
  SimEngine engine(int i);

  /** The virtual clock, in nanoseconds. */
  long nowNanos();

  default int size() {
    return endpoints().size();
  }
}
