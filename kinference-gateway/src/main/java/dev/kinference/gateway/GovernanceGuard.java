package dev.kinference.gateway;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.engine.Admission;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RequestGuard} backed by the policy module's {@link Governance}: callers are the configuration's Tenants
 * (API keys as {@code Authorization: Bearer} or {@code x-api-key}, or a tenant header), admission reserves their
 * rate limits and budget before routing, settlement corrects the reservation with the real usage and records
 * it in the governance's accounting, and a tenant's {@code traffic} bounds the class and priority its requests may
 * ask for. Thread-safe.
 */
public final class GovernanceGuard implements RequestGuard {

  private final Governance governance;

  private GovernanceGuard(Governance governance) {
    this.governance = Objects.requireNonNull(governance, "governance");
  }

  public static GovernanceGuard of(Governance governance) {
    return new GovernanceGuard(governance);
  }

  public Governance governance() {
    return governance;
  }

  @Override
  public CallerIdentity authenticate(ApiFormat format, Function<String, @Nullable String> header) {
    Map<String, String> headers = new HashMap<>();
    copy(header, "authorization", headers);
    copy(header, "x-api-key", headers);
    for (Tenant t : governance.config().headerTenants()) {
      Tenant.HeaderMatch h = t.spec().header();
      if (h != null) {
        copy(header, h.name().toLowerCase(Locale.ROOT), headers);
      }
    }
    dev.kinference.policy.engine.Caller c = governance.authenticate(headers);
    return new CallerIdentity(c.tenant(), c.keyName());
  }

  private static void copy(Function<String, @Nullable String> header, String name, Map<String, String> out) {
    String v = header.apply(name);
    if (v != null) {
      out.put(name, v);
    }
  }

  @Override
  public RequestReservation admit(CallerIdentity caller, InferenceRequest request) {
    Admission admission = governance.reserve(request);
    return new RequestReservation() {
      @Override
      public InferenceRequest request() {
        return admission.request();
      }

      @Override
      public void settle(Usage usage, Endpoint servedBy, double cost, boolean failed) {
        if (failed) {
          admission.fail(usage, servedBy);
        } else if (usage.equals(Usage.UNKNOWN)) {
          admission.close(); // no report: count the whole reservation rather than nothing
        } else {
          admission.settle(usage, servedBy);
        }
      }

      @Override
      public void release() {
        admission.cancel();
      }
    };
  }

  @Override
  public @Nullable List<String> models(CallerIdentity caller) {
    PolicyConfig cfg = governance.config();
    String tenant = caller.tenant();
    if (tenant != null) {
      Tenant t = cfg.tenant(tenant);
      if (t != null && !t.spec().models().isEmpty()) {
        return t.spec().models();
      }
    }
    List<String> all = cfg.publicModels();
    return all.isEmpty() ? null : all;
  }

  /** The caller's tenant's traffic policy; {@link Tenant.Traffic#DEFAULT} for an anonymous or unknown caller. */
  @Override
  public Tenant.Traffic traffic(CallerIdentity caller) {
    String tenant = caller.tenant();
    Tenant t = tenant == null ? null : governance.config().tenant(tenant);
    return t == null ? Tenant.Traffic.DEFAULT : t.spec().traffic();
  }
}
