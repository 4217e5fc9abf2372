package dev.kinference.routing;

import dev.kinference.plugin.Plugin;

/**
 * Rates every candidate endpoint for one request. The router combines scorers as a weighted sum of their scores.
 *
 * <p>Contract: {@link #score} writes a value in [0, 1] (1 best) into {@code scores[i]} for each candidate
 * {@code 0 <= i < context.candidateCount()}. It is called concurrently from many threads, must not block, and
 * should not allocate. The context is only valid during the call. A scorer that is also a
 * {@link dev.kinference.endpoint.FleetListener} is told of endpoints joining and leaving the router's fleet. An
 * implementation must pass {@code dev.kinference.testkit.ScorerContract}.
 */
public interface Scorer extends Plugin {

  void score(RoutingContext context, double[] scores);

  /** Called after a decision, with the index of the chosen candidate; for scorers that keep state. */
  default void onRouted(RoutingContext context, int chosen) {}
}
