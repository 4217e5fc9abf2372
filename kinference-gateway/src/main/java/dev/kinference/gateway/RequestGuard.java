package dev.kinference.gateway;

import dev.kinference.policy.model.Tenant;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RequestRejectedException;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's gatekeeper: who is calling, whether they may send this request now, and which models they see.
 * The policy module provides one backed by Tenant resources; {@link #OPEN} lets everyone in anonymously.
 *
 * <p>Implementations must be thread-safe; they run on every request.
 */
public interface RequestGuard {

  /** No authentication, no limits; every model is listed. */
  RequestGuard OPEN = new RequestGuard() {
    @Override
    public CallerIdentity authenticate(ApiFormat format, Function<String, @Nullable String> header) {
      return CallerIdentity.ANONYMOUS;
    }

    @Override
    public RequestReservation admit(CallerIdentity caller, InferenceRequest request) {
      return RequestReservation.unlimited(request);
    }

    @Override
    public @Nullable List<String> models(CallerIdentity caller) {
      return null;
    }
  };

  /**
   * Recognises the caller from the request headers ({@code Authorization: Bearer}, {@code x-api-key}).
   *
   * @param header looks a request header up by name, case-insensitively
   * @throws RequestRejectedException 401 when credentials are missing or unknown, 403 when they are refused
   */
  CallerIdentity authenticate(ApiFormat format, Function<String, @Nullable String> header);

  /**
   * Admits {@code request} (already carrying the caller's tenant) or refuses it, reserving what its limits need.
   *
   * @throws RequestRejectedException 403 for a model the caller may not use, 429 with a retry delay when a limit
   *     is reached
   */
  RequestReservation admit(CallerIdentity caller, InferenceRequest request);

  /** The model names {@code caller} may use, for {@code GET /v1/models}; null lists every model served. */
  @Nullable List<String> models(CallerIdentity caller);

  /**
   * The traffic class and priority {@code caller}'s requests get, within which the {@code x-kinference-traffic-class}
   * and {@code x-kinference-priority} headers may choose. By default {@link Tenant.Traffic#DEFAULT}: interactive
   * unless batch is asked for, priority 0 and no higher.
   */
  default Tenant.Traffic traffic(CallerIdentity caller) {
    return Tenant.Traffic.DEFAULT;
  }
}
