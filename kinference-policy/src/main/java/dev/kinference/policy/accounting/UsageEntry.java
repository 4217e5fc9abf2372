package dev.kinference.policy.accounting;

import java.util.Objects;

/**
 * One finished request's usage, as added to the usage totals: the same numbers the client's response, the access
 * log and the metrics show.
 *
 * @param tenant the tenant's name ({@code anonymous} when no tenant is configured)
 * @param model the public model name requested
 * @param failed whether the request failed or was cut off (it still used what it used)
 * @param inputTokens input tokens, cached ones included
 * @param cachedInputTokens input tokens served from a prefix cache
 * @param outputTokens output tokens
 * @param costMicros cost in millionths of {@code currency}
 * @param currency the ISO 4217 code the cost is in
 */
public record UsageEntry(String tenant, String model, boolean failed, long inputTokens, long cachedInputTokens,
    long outputTokens, long costMicros, String currency) {

  public UsageEntry {
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(currency, "currency");
    if (inputTokens < 0 || cachedInputTokens < 0 || outputTokens < 0 || costMicros < 0) {
      throw new IllegalArgumentException("usage must not be negative");
    }
  }
}
