package dev.kinference.sim.demo;

import dev.kinference.routing.Router;
import dev.kinference.sim.server.SimulatedFleet;
import java.io.Closeable;

/**
 * How the demo's router learns about the servers beyond its own decisions: the seam where a metrics scraper and a
 * KV-event subscriber (the {@code kinference-vllm} module) plug in.
 *
 * <p>{@link #ROUTER_ACCOUNTING} adds nothing: the router's default {@code ApproximateCacheIndex} learns which
 * prefixes each server holds from the router's own decisions, and load comes from the router's live account of the
 * requests it dispatched (in flight, awaiting a first token, prompt tokens to prefill) and the prefill rates it
 * learns from first tokens. A precise view configures the router with a precise cache index
 * ({@link #configure}), then scrapes {@code /metrics} and subscribes to each server's KV events ({@link #connect};
 * each endpoint's labels {@code EndpointLabels.KV_EVENTS*} give the addresses).
 */
public interface RouterView {

  /** Nothing beyond the router's own accounting. */
  RouterView ROUTER_ACCOUNTING = new RouterView() {
    @Override
    public String routerName() {
      return "kinference-approx";
    }

    @Override
    public Closeable connect(Router router, SimulatedFleet fleet) {
      return () -> {};
    }

    @Override
    public String describe() {
      return "approximate prefix index learned from its own routing decisions, load from its own accounting";
    }
  };

  /** The router's name in the report. */
  String routerName();

  /** Adjusts the router before it is built (a precise cache index, say). Default: nothing. */
  default Router.Builder configure(Router.Builder builder) {
    return builder;
  }

  /** Starts feeding {@code router} what it should know about {@code fleet}; the returned handle stops it. */
  Closeable connect(Router router, SimulatedFleet fleet);

  /** One line for the report: what the router sees. */
  String describe();
}
