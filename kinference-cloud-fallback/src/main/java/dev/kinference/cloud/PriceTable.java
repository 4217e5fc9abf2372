package dev.kinference.cloud;

import dev.kinference.routing.Usage;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Prices by model name, in one currency. Models not in the table cost {@link Prices#FREE}. Immutable and
 * thread-safe.
 */
public final class PriceTable {

  private static final PriceTable EMPTY = new PriceTable(Map.of(), "USD");

  private final Map<String, Prices> prices;
  private final String currency;

  private PriceTable(Map<String, Prices> prices, String currency) {
    this.prices = java.util.Collections.unmodifiableMap(new TreeMap<>(prices));
    this.currency = currency;
  }

  /** A table of these prices, in {@code currency} (an ISO code such as {@code USD}). */
  public static PriceTable of(Map<String, Prices> prices, String currency) {
    Objects.requireNonNull(currency, "currency");
    prices.forEach((k, v) -> Objects.requireNonNull(v, "prices of " + k));
    return new PriceTable(prices, currency);
  }

  public static PriceTable empty() {
    return EMPTY;
  }

  public String currency() {
    return currency;
  }

  public Map<String, Prices> prices() {
    return prices;
  }

  /** The prices of {@code model}, or {@link Prices#FREE}. */
  public Prices pricesOf(String model) {
    return prices.getOrDefault(model, Prices.FREE);
  }

  /** The cost of {@code usage} on {@code model}. */
  public double cost(String model, Usage usage) {
    return pricesOf(model).cost(usage);
  }

  /** This table with the other's entries added (the other's win on a clash). */
  public PriceTable with(PriceTable other) {
    Map<String, Prices> merged = new TreeMap<>(prices);
    merged.putAll(other.prices);
    return new PriceTable(merged, currency);
  }
}
