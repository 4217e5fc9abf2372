package dev.kinference.policy.accounting;

import java.util.Objects;

/**
 * What one tenant used of one model.
 *
 * @param tenant the tenant's name ({@code anonymous} when no tenant is configured)
 * @param model the public model name requested
 * @param requests requests that were sent (completed or failed)
 * @param errors requests that failed
 * @param rejected requests refused by a policy, a rate limit or a budget
 * @param inputTokens input tokens, cached ones included
 * @param cachedInputTokens input tokens served from a prefix cache
 * @param outputTokens output tokens
 * @param costMicros cost in millionths of the currency unit
 */
public record UsageRecord(String tenant, String model, long requests, long errors, long rejected, long inputTokens,
    long cachedInputTokens, long outputTokens, long costMicros) {

  public UsageRecord {
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(model, "model");
  }

  /** The cost in currency units. */
  public double cost() {
    return costMicros / 1e6;
  }

  /** The sum of this record and {@code other}, named after this one. */
  public UsageRecord plus(UsageRecord other) {
    return new UsageRecord(tenant, model, requests + other.requests, errors + other.errors,
        rejected + other.rejected, inputTokens + other.inputTokens, cachedInputTokens + other.cachedInputTokens,
        outputTokens + other.outputTokens, costMicros + other.costMicros);
  }
}
