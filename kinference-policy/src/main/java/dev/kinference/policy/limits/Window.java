package dev.kinference.policy.limits;

import java.time.Duration;
import java.util.Objects;

/** How a limit counts. */
public sealed interface Window permits Window.Sliding, Window.Period, Window.Concurrent {

  /**
   * Amounts reserved in any window of {@code length} ending now. Stores may count a little more than the length (the
   * in-memory store counts up to 1/60 more), never less, so the limit holds over every window of that length.
   */
  record Sliding(Duration length) implements Window {
    public Sliding {
      Objects.requireNonNull(length, "length");
      if (length.toMillis() < 60) {
        throw new IllegalArgumentException("a sliding window must be at least 60 ms: " + length);
      }
    }

    public static final Sliding MINUTE = new Sliding(Duration.ofMinutes(1));
  }

  /**
   * Amounts reserved in the current calendar period (UTC); the count starts again at the next one. The store
   * computes the period from its own clock, so every replica sharing a store counts the same period.
   */
  record Period(CalendarPeriod calendar) implements Window {
    public Period {
      Objects.requireNonNull(calendar, "calendar");
    }
  }

  /**
   * Amounts held now: reserved and not yet settled. A shared store holds them as leases that the reserving process
   * renews while the request runs, so a process that dies frees its slots when its leases expire.
   */
  record Concurrent() implements Window {
    public static final Concurrent INSTANCE = new Concurrent();
  }
}
