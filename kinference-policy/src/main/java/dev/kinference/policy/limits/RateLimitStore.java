package dev.kinference.policy.limits;

import dev.kinference.plugin.Plugin;

/**
 * Counters for rate limits and budgets. Implementations must be thread-safe; {@link #tryReserve} must be atomic
 * with respect to every other call touching the same keys (no request may observe another's partial reservation
 * as granted), so that no counter ever exceeds its limit through a reservation. A store shared by several gateway
 * replicas implements the same contract over the network (for example with one server-side script per call).
 */
public interface RateLimitStore extends Plugin {

  /** Reserves every demand, or none when one does not fit. */
  Reservation tryReserve(java.util.List<Demand> demands, long nowMillis);

  /**
   * Corrects each demand of {@code granted} to what was really used, and releases its {@link Window.Concurrent}
   * amounts. {@code actual[i]} belongs to {@code granted.demands().get(i)}; it may exceed the estimate. A sliding
   * window that no longer covers the reservation is not corrected.
   */
  void settle(Reservation.Granted granted, long[] actual, long nowMillis);

  /** Undoes {@code granted} entirely: the request never started. */
  default void cancel(Reservation.Granted granted, long nowMillis) {
    settle(granted, new long[granted.demands().size()], nowMillis);
  }

  /** What the counter {@code key} holds now in {@code window} (0 if unknown). */
  long used(String key, Window window, long nowMillis);
}
