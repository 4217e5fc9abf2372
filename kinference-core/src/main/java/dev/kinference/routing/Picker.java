package dev.kinference.routing;

import dev.kinference.plugin.Plugin;
import java.util.random.RandomGenerator;

/**
 * Chooses one candidate from the combined scores. Implementations must be thread-safe and must not allocate.
 */
public interface Picker extends Plugin {

  /**
   * The index of the chosen candidate among {@code totals[0, count)}, {@code count >= 1}; higher totals are better.
   */
  int pick(double[] totals, int count, RandomGenerator random);
}
