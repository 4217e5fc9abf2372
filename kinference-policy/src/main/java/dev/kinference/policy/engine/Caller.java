package dev.kinference.policy.engine;

import dev.kinference.request.InferenceRequest;
import org.jspecify.annotations.Nullable;

/**
 * Who sent a request.
 *
 * @param tenant the tenant's name, or null when the configuration has no tenants (anyone may call)
 * @param keyName the name of the API key used, or null (no key, or an unnamed one)
 */
public record Caller(@Nullable String tenant, @Nullable String keyName) {

  /** A caller of a configuration without tenants. */
  public static final Caller ANONYMOUS = new Caller(null, null);

  /** {@code request} attributed to this caller (its tenant set). */
  public InferenceRequest attribute(InferenceRequest request) {
    return java.util.Objects.equals(request.tenant(), tenant) ? request : request.toBuilder().tenant(tenant).build();
  }
}
