package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.plugin.Plugin;
import dev.kinference.request.InferenceRequest;

/**
 * Removes endpoints that should not get a request. A filter that would remove every candidate is skipped (fails
 * open), so a filter never makes a request unroutable by itself.
 *
 * <p>Implementations must be thread-safe, fast, and must not block.
 */
public interface Filter extends Plugin {

  /** Whether {@code endpoint} may receive {@code request} at {@code nowNanos}. */
  boolean accept(InferenceRequest request, EndpointState endpoint, long nowNanos);
}
