package dev.kinference.sim.workload;

import java.util.random.RandomGenerator;

/**
 * A source of sessions. Deterministic: the same seed gives the same sessions in the same order. Not thread-safe.
 */
public interface Workload {

  /** A short name for reports ({@code shared-prefix}, {@code multi-turn}, ...). */
  String name();

  /**
   * A new session. {@code random} is the run's workload generator; {@code number} counts sessions from 0.
   */
  Session newSession(RandomGenerator random, long number);

  /** A one-line description of the parameters, for reports. */
  String describe();
}
