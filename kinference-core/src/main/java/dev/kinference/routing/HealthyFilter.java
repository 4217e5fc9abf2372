package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.request.InferenceRequest;

/** Keeps endpoints whose health is {@link Health#HEALTHY}. Stateless and thread-safe. */
public final class HealthyFilter implements Filter {

  /** Public for {@link java.util.ServiceLoader}. */
  public HealthyFilter() {}

  @Override
  public String name() {
    return "healthy";
  }

  @Override
  public boolean accept(InferenceRequest request, EndpointState endpoint, long nowNanos) {
    return endpoint.health() == Health.HEALTHY;
  }
}
