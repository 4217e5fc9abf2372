package dev.kinference.routing;

import java.util.random.RandomGenerator;

/**
 * Picks the highest total; candidates within {@code tolerance} (relative, default 1%) of it tie and one of them is
 * chosen uniformly at random, so identical servers share load instead of herding onto the first. Immutable and
 * thread-safe.
 */
public final class MaxScorePicker implements Picker {

  private final double tolerance;

  public MaxScorePicker() {
    this(0.01);
  }

  public MaxScorePicker(double tolerance) {
    if (!(tolerance >= 0 && tolerance < 1)) {
      throw new IllegalArgumentException("tolerance must be in [0, 1): " + tolerance);
    }
    this.tolerance = tolerance;
  }

  @Override
  public String name() {
    return "max-score";
  }

  @Override
  public int pick(double[] totals, int count, RandomGenerator random) {
    double best = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < count; i++) {
      best = Math.max(best, totals[i]);
    }
    double floor = best - tolerance * Math.abs(best);
    int ties = 0;
    int chosen = 0;
    // Reservoir sampling over the ties: one pass, no allocation.
    for (int i = 0; i < count; i++) {
      if (totals[i] >= floor) {
        ties++;
        if (ties == 1 || random.nextInt(ties) == 0) {
          chosen = i;
        }
      }
    }
    return chosen;
  }
}
