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

  /** Amounts reserved since {@code startMillis}; the count starts again at the next period ({@code endMillis}). */
  record Period(long startMillis, long endMillis) implements Window {
    public Period {
      if (endMillis <= startMillis) {
        throw new IllegalArgumentException("a period must end after it starts");
      }
    }
  }

  /** Amounts held now: reserved and not yet settled. */
  record Concurrent() implements Window {
    public static final Concurrent INSTANCE = new Concurrent();
  }
}
