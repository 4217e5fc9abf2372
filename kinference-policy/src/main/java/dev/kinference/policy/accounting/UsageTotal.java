package dev.kinference.policy.accounting;

import java.time.Instant;
import java.util.Objects;

/**
 * What one tenant used in one period, as kept by the state store.
 *
 * @param tenant the tenant
 * @param model the model, or {@code *} for all models together
 * @param from the period's start
 * @param to the period's end (exclusive)
 * @param requests requests that reached a server (completed, failed or cut off)
 * @param errors of those, the ones that failed or were cut off
 * @param inputTokens input tokens, cached ones included
 * @param cachedTokens input tokens served from a prefix cache
 * @param outputTokens output tokens
 * @param costMicros cost in millionths of {@code currency}
 * @param currency the ISO 4217 code of the cost
 */
public record UsageTotal(String tenant, String model, Instant from, Instant to, long requests, long errors,
    long inputTokens, long cachedTokens, long outputTokens, long costMicros, String currency) {

  public UsageTotal {
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(currency, "currency");
  }

  /** Input plus output tokens. */
  public long totalTokens() {
    return inputTokens + outputTokens;
  }

  /** The cost in currency units. */
  public double cost() {
    return costMicros / 1e6;
  }

  /** The sum of this total and {@code other} over the span of both (same tenant, model and currency assumed). */
  public UsageTotal plus(UsageTotal other) {
    return new UsageTotal(tenant, model, from.isBefore(other.from) ? from : other.from,
        to.isAfter(other.to) ? to : other.to, requests + other.requests, errors + other.errors,
        inputTokens + other.inputTokens, cachedTokens + other.cachedTokens, outputTokens + other.outputTokens,
        costMicros + other.costMicros, currency);
  }
}
