package dev.kinference.routing;

/** Min-max normalisation where less is better, as llm-d's load scorers do. */
final class MinMax {

  private MinMax() {}

  /** Writes {@code (max - v) / (max - min)} per candidate, or 1 for all when every value is equal. */
  static void lessIsBetter(double[] values, int n, double[] scores) {
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, values[i]);
      max = Math.max(max, values[i]);
    }
    double range = max - min;
    for (int i = 0; i < n; i++) {
      scores[i] = range <= 0 ? 1.0 : (max - values[i]) / range;
    }
  }
}
