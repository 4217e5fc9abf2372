package dev.kinference.policy.model;

import dev.kinference.policy.limits.CalendarPeriod;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A caller of the gateway: how it is recognised, which models it may use, its rate limits and its budget.
 */
public record Tenant(ObjectMeta metadata, Spec spec) implements Resource {

  public static final String KIND = "Tenant";

  /** Output tokens reserved for a request that gives no {@code max_tokens}, unless the tenant says otherwise. */
  public static final int DEFAULT_MAX_TOKENS = 1024;

  public Tenant {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(spec, "spec");
  }

  @Override
  public String kind() {
    return KIND;
  }

  /** Whether the tenant may use {@code publicModel} ({@code *} in {@code models} allows every model). */
  public boolean allows(String publicModel) {
    return spec.models().contains("*") || spec.models().contains(publicModel);
  }

  /**
   * @param apiKeys keys that identify the tenant, stored as SHA-256 hashes
   * @param header a request header that identifies the tenant (set by a trusted proxy), or null
   * @param models public model names the tenant may use; {@code *} allows all
   * @param limits limits over all of the tenant's requests, or null for none
   * @param modelLimits limits per public model name, on top of {@code limits}
   * @param budget spending limit over a period, or null for none
   */
  public record Spec(List<ApiKey> apiKeys, @Nullable HeaderMatch header, List<String> models,
      @Nullable RateLimits limits, Map<String, RateLimits> modelLimits, @Nullable Budget budget) {
    public Spec {
      apiKeys = List.copyOf(apiKeys);
      models = List.copyOf(models);
      modelLimits = Map.copyOf(modelLimits);
    }
  }

  /**
   * An API key, by the lower-case hex SHA-256 of its UTF-8 bytes ({@code printf %s "$KEY" | sha256sum}).
   *
   * @param name a label for the key (who holds it), or null
   */
  public record ApiKey(String sha256, @Nullable String name) {
    public ApiKey {
      Objects.requireNonNull(sha256, "sha256");
    }
  }

  /** The tenant is the caller when header {@code name} has exactly {@code value}. */
  public record HeaderMatch(String name, String value) {
    public HeaderMatch {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
    }
  }

  /**
   * Rate limits; a null component is unlimited. Token limits count input plus output tokens, reserved before a
   * request (estimated input plus the requested output budget) and corrected to the real usage after it.
   *
   * @param requestsPerMinute requests started in any sliding minute
   * @param tokensPerMinute input + output tokens in any sliding minute
   * @param concurrentRequests requests in flight at once
   * @param defaultMaxTokens output tokens reserved for (and imposed on) a request without {@code max_tokens};
   *     null means {@value Tenant#DEFAULT_MAX_TOKENS}
   */
  public record RateLimits(@Nullable Long requestsPerMinute, @Nullable Long tokensPerMinute,
      @Nullable Integer concurrentRequests, @Nullable Integer defaultMaxTokens) {}

  /**
   * A spending limit per calendar period (UTC).
   *
   * @param period the period
   * @param limit the most the tenant may spend in one period, in {@code currency}
   * @param currency the ISO 4217 code the limit and prices are in, such as {@code USD}
   * @param prices per public model name, what the tenant is charged; {@code *} applies to every other model.
   *     Models without a price here are charged at their pool's or provider's price.
   */
  public record Budget(CalendarPeriod period, double limit, String currency, Map<String, Price> prices) {
    public Budget {
      Objects.requireNonNull(period, "period");
      Objects.requireNonNull(currency, "currency");
      prices = Map.copyOf(prices);
    }
  }
}
