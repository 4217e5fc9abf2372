package dev.kinference.gateway;

import dev.kinference.routing.Usage;

/**
 * Capacity a {@link RequestGuard} set aside for one admitted request (rate-limit tokens, a concurrency slot). The
 * gateway ends it exactly once: {@link #settle} with what the request really used, or {@link #release} if it never
 * reached a server. Implementations must be thread-safe and idempotent.
 */
public interface Reservation {

  /** Nothing reserved. */
  Reservation NONE = new Reservation() {
    @Override
    public void settle(Usage usage, double cost) {}

    @Override
    public void release() {}
  };

  /** The request finished (or failed after reaching a server) having used {@code usage}, costing {@code cost}. */
  void settle(Usage usage, double cost);

  /** The request never reached a server: give everything back. */
  void release();
}
