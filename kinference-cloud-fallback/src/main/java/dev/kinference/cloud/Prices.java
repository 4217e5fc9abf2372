package dev.kinference.cloud;

import dev.kinference.routing.Usage;

/**
 * What a model costs per million tokens, in one currency (the price table's). Cached input is what providers
 * charge for prompt tokens served from their prompt cache. Immutable.
 */
public record Prices(double inputPerMillion, double cachedInputPerMillion, double outputPerMillion) {

  /** Free: local models, unless a price is configured for them. */
  public static final Prices FREE = new Prices(0, 0, 0);

  public Prices {
    if (!(inputPerMillion >= 0) || !(cachedInputPerMillion >= 0) || !(outputPerMillion >= 0)
        || Double.isInfinite(inputPerMillion + cachedInputPerMillion + outputPerMillion)) {
      throw new IllegalArgumentException("prices must be finite and not negative");
    }
  }

  /** Input and output prices, with cached input at the input price. */
  public static Prices of(double inputPerMillion, double outputPerMillion) {
    return new Prices(inputPerMillion, inputPerMillion, outputPerMillion);
  }

  /** The cost of one request's usage. */
  public double cost(Usage usage) {
    long uncached = (long) usage.promptTokens() - usage.cachedPromptTokens();
    return (uncached * inputPerMillion + usage.cachedPromptTokens() * cachedInputPerMillion
        + usage.completionTokens() * outputPerMillion) / 1e6;
  }
}
