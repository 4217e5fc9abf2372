package dev.kinference.policy;

import dev.kinference.endpoint.Fleet;
import dev.kinference.plugin.Plugin;
import dev.kinference.request.InferenceRequest;

/**
 * Decides, before routing, whether and where a request may go. Implementations must be thread-safe and fast: they
 * run on every request, concurrently.
 */
public interface PolicyEngine extends Plugin {

  /**
   * The verdict for {@code request} given the current {@code fleet} (whose endpoint states carry load and
   * saturation). Must not throw for any request; invalid requests are rejected with a verdict.
   */
  PolicyVerdict evaluate(InferenceRequest request, Fleet.Snapshot fleet);
}
