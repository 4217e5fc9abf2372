package dev.kinference.policy.limits;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** The outcome of {@link RateLimitStore#tryReserve}: every demand granted, or the one that did not fit. */
public sealed interface Reservation permits Reservation.Granted, Reservation.Refused {

  /**
   * Every demand was reserved at {@code atMillis}; settle or cancel it exactly once.
   *
   * @param demands the demands, as reserved
   * @param atMillis when (the store's sliding windows place the amounts at this time)
   */
  record Granted(List<Demand> demands, long atMillis) implements Reservation {
    public Granted {
      demands = List.copyOf(demands);
    }
  }

  /**
   * Nothing was reserved because {@code demand} did not fit.
   *
   * @param demand the limit that refused
   * @param used what the counter held
   * @param retryAfter when enough will be free again (the end of the period for a budget); for a demand larger
   *     than its limit, the window's length
   */
  record Refused(Demand demand, long used, Duration retryAfter) implements Reservation {
    public Refused {
      Objects.requireNonNull(demand, "demand");
      Objects.requireNonNull(retryAfter, "retryAfter");
    }
  }
}
