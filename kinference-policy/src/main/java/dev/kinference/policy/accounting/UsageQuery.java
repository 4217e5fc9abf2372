package dev.kinference.policy.accounting;

import dev.kinference.policy.limits.CalendarPeriod;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Which usage totals to read: the periods of {@code granularity} that overlap {@code [from, to)}, whole (a period
 * is the smallest unit the totals keep), of one tenant or every tenant, of one model or all.
 *
 * @param tenant one tenant, or null for every tenant
 * @param model one public model name, or null for all models together
 * @param from the first instant wanted; the first period returned starts at or before it
 * @param to the end, exclusive
 * @param granularity {@link CalendarPeriod#HOUR}, {@link CalendarPeriod#DAY} or {@link CalendarPeriod#MONTH}
 */
public record UsageQuery(@Nullable String tenant, @Nullable String model, Instant from, Instant to,
    CalendarPeriod granularity) {

  /** The most periods one query may span, so that a careless query cannot make the store read for minutes. */
  public static final int MAX_PERIODS = 5_000;

  public UsageQuery {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(granularity, "granularity");
    if (granularity == CalendarPeriod.WEEK) {
      throw new IllegalArgumentException("usage totals are kept by hour, day and month, not by week");
    }
    if (!to.isAfter(from)) {
      throw new IllegalArgumentException("'to' (" + to + ") must be after 'from' (" + from + ")");
    }
    long periods = 0;
    for (Instant t = granularity.start(from); t.isBefore(to); t = granularity.end(t)) {
      if (++periods > MAX_PERIODS) {
        throw new IllegalArgumentException("the query spans more than " + MAX_PERIODS + " " + granularity.yamlName()
            + "s; use a coarser granularity or a shorter range");
      }
    }
  }

  /** The start of every period of the query, in order. */
  public java.util.List<Instant> periodStarts() {
    java.util.List<Instant> out = new java.util.ArrayList<>();
    for (Instant t = granularity.start(from); t.isBefore(to); t = granularity.end(t)) {
      out.add(t);
    }
    return out;
  }
}
