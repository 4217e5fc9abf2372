package dev.kinference.routing;

import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.Plugin;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Rates every candidate endpoint for one request. The router combines scorers as a weighted sum of their scores.
 *
 * <p>Contract: {@link #score} writes a value in [0, 1] (1 best) into {@code scores[i]} for each candidate
 * {@code 0 <= i < context.candidateCount()}. It is called concurrently from many threads, must not block, and
 * should not allocate. The context is only valid during the call. A scorer that is also a
 * {@link dev.kinference.endpoint.FleetListener} is told of endpoints joining and leaving the router's fleet. An
 * implementation must pass {@code dev.kinference.testkit.ScorerContract}.
 *
 * <p>Parameters: the instance {@link java.util.ServiceLoader} finds is also the factory of its type. It declares the
 * {@link #declaredParameters() parameters} the type takes, each with its default, and {@link #create} makes the
 * instance a {@link RoutingProfile} entry asks for; the router validates the values against the declaration first.
 */
public interface Scorer extends Plugin {

  void score(RoutingContext context, double[] scores);

  /** Called after a decision, with the index of the chosen candidate; for scorers that keep state. */
  default void onRouted(RoutingContext context, int chosen) {}

  /**
   * The parameters a scorer of this type takes, each with its default and range: the one home of those defaults.
   * None by default.
   */
  default List<Parameter> declaredParameters() {
    return List.of();
  }

  /**
   * A scorer of this type for one router, configured with {@code parameters} (validated against {@link
   * #declaredParameters()}). The default returns this instance, which suits a scorer that keeps no state and takes no
   * parameters; a scorer with either overrides it.
   *
   * @param ticker the router's clock, in nanoseconds, for scorers that keep time
   */
  default Scorer create(Parameters parameters, LongSupplier ticker) {
    return this;
  }

  /** The parameters this instance runs with; by default, the declared ones at their defaults. */
  default Parameters parameters() {
    return Parameters.defaults(declaredParameters());
  }
}
