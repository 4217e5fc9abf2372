package dev.kinference.policy.limits;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/**
 * A calendar period in UTC (weeks start on Monday): a budget's period, and the granularity of usage totals. The one
 * home of calendar arithmetic; a shared store's server-side scripts compute the same boundaries from the store's
 * clock (see {@code RedisStateStore}), so replicas with skewed clocks agree on which period a request falls in.
 */
public enum CalendarPeriod {
  HOUR,
  DAY,
  WEEK,
  MONTH;

  /** The name in YAML and on the command line: {@code hour}, {@code day}, {@code week}, {@code month}. */
  public String yamlName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The start of the period containing {@code t}. */
  public Instant start(Instant t) {
    ZonedDateTime z = t.atZone(ZoneOffset.UTC);
    return switch (this) {
      case HOUR -> z.truncatedTo(ChronoUnit.HOURS).toInstant();
      case DAY -> z.truncatedTo(ChronoUnit.DAYS).toInstant();
      case WEEK -> LocalDate.from(z).with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY))
          .atStartOfDay(ZoneOffset.UTC).toInstant();
      case MONTH -> LocalDate.from(z).withDayOfMonth(1).atStartOfDay(ZoneOffset.UTC).toInstant();
    };
  }

  /** The end (exclusive) of the period containing {@code t}: the start of the next one. */
  public Instant end(Instant t) {
    ZonedDateTime s = start(t).atZone(ZoneOffset.UTC);
    return switch (this) {
      case HOUR -> s.plusHours(1).toInstant();
      case DAY -> s.plusDays(1).toInstant();
      case WEEK -> s.plusWeeks(1).toInstant();
      case MONTH -> s.plusMonths(1).toInstant();
    };
  }

  /** {@link #start(Instant)} in epoch milliseconds. */
  public long startMillis(long epochMillis) {
    return start(Instant.ofEpochMilli(epochMillis)).toEpochMilli();
  }

  /** {@link #end(Instant)} in epoch milliseconds. */
  public long endMillis(long epochMillis) {
    return end(Instant.ofEpochMilli(epochMillis)).toEpochMilli();
  }

  /** The nominal length, for messages. */
  public Duration nominalLength() {
    return switch (this) {
      case HOUR -> Duration.ofHours(1);
      case DAY -> Duration.ofDays(1);
      case WEEK -> Duration.ofDays(7);
      case MONTH -> Duration.ofDays(30);
    };
  }

  /** The adjective for messages: hourly, daily, weekly, monthly. */
  public String adjective() {
    return switch (this) {
      case HOUR -> "hourly";
      case DAY -> "daily";
      case WEEK -> "weekly";
      case MONTH -> "monthly";
    };
  }
}
