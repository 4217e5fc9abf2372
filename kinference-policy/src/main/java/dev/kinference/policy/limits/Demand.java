package dev.kinference.policy.limits;

import java.util.Objects;

/**
 * One limit a request must fit in: reserving {@code amount} on {@code key} must keep the key's count within
 * {@code limit}.
 *
 * @param key the counter, such as {@code tenant/search:tokens}
 * @param window how the counter counts
 * @param limit the most the counter may hold
 * @param amount this request's estimate (tokens, requests, cost in micro-units)
 * @param description how the limit is named to the caller, such as {@code tokensPerMinute of tenant search}
 */
public record Demand(String key, Window window, long limit, long amount, String description) {

  public Demand {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(description, "description");
    if (limit < 0 || amount < 0) {
      throw new IllegalArgumentException("limit and amount must not be negative");
    }
  }
}
