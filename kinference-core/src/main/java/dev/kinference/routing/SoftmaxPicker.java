package dev.kinference.routing;

import java.util.random.RandomGenerator;

/**
 * Samples a candidate with probability proportional to {@code exp((total - best) / temperature)}: a temperature
 * near 0 is max-score, a large one is uniform. Spreads load among nearly equal endpoints more smoothly than a
 * hard tie band. Immutable and thread-safe.
 */
public final class SoftmaxPicker implements Picker {

  private final double temperature;

  /** Temperature 0.05. */
  public SoftmaxPicker() {
    this(0.05);
  }

  public SoftmaxPicker(double temperature) {
    if (!(temperature > 0) || Double.isInfinite(temperature)) {
      throw new IllegalArgumentException("temperature must be positive and finite: " + temperature);
    }
    this.temperature = temperature;
  }

  @Override
  public String name() {
    return "softmax";
  }

  @Override
  public int pick(double[] totals, int count, RandomGenerator random) {
    double best = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < count; i++) {
      best = Math.max(best, totals[i]);
    }
    double sum = 0;
    for (int i = 0; i < count; i++) {
      sum += Math.exp((totals[i] - best) / temperature);
    }
    double target = random.nextDouble() * sum;
    for (int i = 0; i < count; i++) {
      target -= Math.exp((totals[i] - best) / temperature);
      if (target <= 0) {
        return i;
      }
    }
    return count - 1;
  }
}
