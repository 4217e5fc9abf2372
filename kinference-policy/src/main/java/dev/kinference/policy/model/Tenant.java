package dev.kinference.policy.model;

import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.request.TrafficClass;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A caller of the gateway: how it is recognised, which models it may use, its rate limits, its budget, and the
 * traffic class and priority its requests get.
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
   * @param traffic the traffic class and priority of the tenant's requests ({@link Traffic#DEFAULT} when not
   *     configured)
   */
  public record Spec(List<ApiKey> apiKeys, @Nullable HeaderMatch header, List<String> models,
      @Nullable RateLimits limits, Map<String, RateLimits> modelLimits, @Nullable Budget budget, Traffic traffic) {
    public Spec {
      apiKeys = List.copyOf(apiKeys);
      models = List.copyOf(models);
      modelLimits = Map.copyOf(modelLimits);
      Objects.requireNonNull(traffic, "traffic");
    }
  }

  /**
   * The traffic class and priority of a tenant's requests. A request without the gateway's
   * {@code x-kinference-traffic-class} and {@code x-kinference-priority} headers gets {@code defaultClass} and
   * {@code priority}; the headers only choose within what the tenant may use ({@link #classFor},
   * {@link #clampPriority}). Policy rules ({@code setPriority}) are written by operators and not limited by it.
   *
   * @param defaultClass the class of a request that does not ask for one
   * @param allowedClasses the classes a request may ask for; always holds {@code defaultClass} and
   *     {@link TrafficClass#BATCH} (moving down is never a privilege)
   * @param priority the priority of a request that does not ask for one
   * @param maxPriority the highest priority a request may ask for; at least {@code priority}
   */
  public record Traffic(TrafficClass defaultClass, Set<TrafficClass> allowedClasses, int priority,
      int maxPriority) {

    /** The lowest priority a tenant may be given, or a request may ask for (lower asks are raised to it). */
    public static final int MIN_PRIORITY = -1000;
    /** The highest priority a tenant may be given. */
    public static final int MAX_PRIORITY = 1000;

    /** Interactive by default, batch when asked, priority 0 and no higher. Also that of an anonymous caller. */
    public static final Traffic DEFAULT =
        new Traffic(TrafficClass.INTERACTIVE, EnumSet.allOf(TrafficClass.class), 0, 0);

    /**
     * @throws IllegalArgumentException when a priority is outside [{@value #MIN_PRIORITY}, {@value #MAX_PRIORITY}]
     *     or {@code maxPriority} is below {@code priority}
     */
    public Traffic {
      Objects.requireNonNull(defaultClass, "defaultClass");
      EnumSet<TrafficClass> allowed = EnumSet.of(defaultClass, TrafficClass.BATCH);
      allowed.addAll(allowedClasses);
      allowedClasses = Collections.unmodifiableSet(allowed);
      if (priority < MIN_PRIORITY || maxPriority > MAX_PRIORITY) {
        throw new IllegalArgumentException("priorities must be between " + MIN_PRIORITY + " and " + MAX_PRIORITY
            + ", got priority " + priority + " and maxPriority " + maxPriority);
      }
      if (maxPriority < priority) {
        throw new IllegalArgumentException("maxPriority " + maxPriority + " is below priority " + priority);
      }
    }

    /**
     * The class of a request that asked for {@code requested} (null: did not ask): the requested class when the
     * tenant may use it, else {@code defaultClass}.
     */
    public TrafficClass classFor(@Nullable TrafficClass requested) {
      return requested != null && allowedClasses.contains(requested) ? requested : defaultClass;
    }

    /**
     * The priority of a request that asked for {@code requested}: at most {@code maxPriority}, at least
     * {@value #MIN_PRIORITY}.
     */
    public int clampPriority(int requested) {
      return Math.max(MIN_PRIORITY, Math.min(maxPriority, requested));
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
