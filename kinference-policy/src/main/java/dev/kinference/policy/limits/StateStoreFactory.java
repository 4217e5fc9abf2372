package dev.kinference.policy.limits;

import dev.kinference.plugin.Plugin;
import java.net.URI;
import java.util.Set;

/**
 * Opens a shared {@link RateLimitStore} from a URI, found with {@link java.util.ServiceLoader} by its scheme (the
 * Redis module opens {@code redis://} and {@code rediss://}). Use {@link StateStores#open} rather than this
 * directly. Implementations must be thread-safe.
 */
public interface StateStoreFactory extends Plugin {

  /** The URI schemes this factory opens, lower case. */
  Set<String> schemes();

  /**
   * A store at {@code settings.uri()}; it connects lazily or in the background, so that an unreachable server
   * does not fail the call (its calls throw {@link StateStoreUnavailableException} until it answers).
   *
   * @throws IllegalArgumentException if the URI is malformed for this store
   */
  RateLimitStore open(StateStoreSettings settings);

  /**
   * How to reach a store.
   *
   * @param uri the store's URI, credentials included or not
   * @param password a password to use when the URI has none, or null
   * @param timeout the longest any one call may take before it fails with {@link StateStoreUnavailableException}
   */
  record StateStoreSettings(URI uri, @org.jspecify.annotations.Nullable String password,
      java.time.Duration timeout) {
    public StateStoreSettings {
      java.util.Objects.requireNonNull(uri, "uri");
      java.util.Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout must be positive: " + timeout);
      }
    }
  }
}
