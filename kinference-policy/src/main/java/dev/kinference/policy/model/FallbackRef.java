package dev.kinference.policy.model;

import org.jspecify.annotations.Nullable;

/**
 * One step of a fallback chain: an external provider's model ({@code provider} and {@code model}), or a model
 * alias ({@code alias}), whose targets and own fallbacks are expanded in place.
 */
public record FallbackRef(@Nullable String provider, @Nullable String model, @Nullable String alias) {

  public static FallbackRef provider(String provider, String model) {
    return new FallbackRef(provider, model, null);
  }

  public static FallbackRef alias(String alias) {
    return new FallbackRef(null, null, alias);
  }

  @Override
  public String toString() {
    return alias != null ? "alias " + alias : provider + "/" + model;
  }
}
