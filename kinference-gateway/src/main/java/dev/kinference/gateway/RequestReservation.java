package dev.kinference.gateway;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.util.Objects;

/**
 * What a {@link RequestGuard} set aside for one admitted request (rate-limit tokens, a concurrency slot, budget).
 * The gateway ends it exactly once: {@link #settle} with what the request really used once it reached a server,
 * or {@link #release} if it never did. Implementations must be thread-safe and ignore calls after the first end.
 */
public interface RequestReservation {

  /** Nothing reserved for {@code request}. */
  static RequestReservation unlimited(InferenceRequest request) {
    Objects.requireNonNull(request, "request");
    return new RequestReservation() {
      @Override
      public InferenceRequest request() {
        return request;
      }

      @Override
      public void settle(Usage usage, Endpoint servedBy, double cost, boolean failed) {}

      @Override
      public void release() {}
    };
  }

  /** The request to route: the one admitted, with any output budget the guard imposed. */
  InferenceRequest request();

  /**
   * The request reached {@code servedBy} and used {@code usage} (the server's report; {@link Usage#UNKNOWN} when
   * none came), costing {@code cost} at the gateway's prices; {@code failed} if it did not complete.
   */
  void settle(Usage usage, Endpoint servedBy, double cost, boolean failed);

  /** The request never reached a server: give everything back. */
  void release();
}
