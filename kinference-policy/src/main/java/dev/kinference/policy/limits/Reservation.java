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
   * @param atMillis when, by the store's clock (its sliding windows and periods place the amounts at this time)
   * @param ticket what the store needs to settle it besides the demands (a shared store's lease id), or empty
   */
  record Granted(List<Demand> demands, long atMillis, String ticket) implements Reservation {
    public Granted {
      demands = List.copyOf(demands);
      Objects.requireNonNull(ticket, "ticket");
    }

    /** A grant that needs no ticket. */
    public Granted(List<Demand> demands, long atMillis) {
      this(demands, atMillis, "");
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
