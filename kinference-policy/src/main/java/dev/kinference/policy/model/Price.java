package dev.kinference.policy.model;

import org.jspecify.annotations.Nullable;

/**
 * Prices in currency units per million tokens.
 *
 * @param input per million uncached input tokens
 * @param cachedInput per million input tokens served from a prefix cache; null means the input price
 * @param output per million output tokens
 */
public record Price(double input, @Nullable Double cachedInput, double output) {

  private static final double MAX_MICROS = 1e18;

  /** Free. */
  public static final Price ZERO = new Price(0, null, 0);

  /** The cached-input price, or the input price when none is given. */
  public double cachedInputOrInput() {
    return cachedInput != null ? cachedInput : input;
  }

  /**
   * The cost of some usage in micro-units (millionths of a currency unit): a price per million tokens times a
   * token count is exactly micro-units.
   */
  public long costMicros(long uncachedInputTokens, long cachedInputTokens, long outputTokens) {
    double micros = uncachedInputTokens * input + cachedInputTokens * cachedInputOrInput() + outputTokens * output;
    return micros <= 0 || Double.isNaN(micros) ? 0 : (long) Math.min(MAX_MICROS, Math.ceil(micros));
  }
}
