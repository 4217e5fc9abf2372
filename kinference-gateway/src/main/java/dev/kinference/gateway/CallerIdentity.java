package dev.kinference.gateway;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who sent a request, as a {@link RequestGuard} recognised them.
 *
 * @param tenant the tenant name, or null for an anonymous caller of an open gateway
 * @param keyId a non-secret identifier of the credential used (for logs), or null
 */
public record CallerIdentity(@Nullable String tenant, @Nullable String keyId) {

  /** The caller of a gateway without authentication. */
  public static final CallerIdentity ANONYMOUS = new CallerIdentity(null, null);

  /** A caller of a tenant. */
  public static CallerIdentity of(String tenant) {
    return new CallerIdentity(Objects.requireNonNull(tenant, "tenant"), null);
  }

  /** The tenant name for metrics and logs: the tenant, or {@code anonymous}. */
  public String tenantLabel() {
    return tenant == null ? "anonymous" : tenant;
  }
}
