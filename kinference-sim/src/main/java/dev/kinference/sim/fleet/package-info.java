/**
 * A deterministic, seeded, discrete-event run of N simulated vLLM servers, a workload and a router in virtual time.
 * The router is called in-process; it sees metrics only as a scraper would (every scrape interval, delivered after
 * a delay) and KV events after a delay, and hears of first tokens and completions when they happen.
 *
 * <p>Entry point: {@link dev.kinference.sim.fleet.VirtualFleet}.
 */
@NullMarked
package dev.kinference.sim.fleet;

import org.jspecify.annotations.NullMarked;
