package dev.kinference.policy.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class InMemoryRateLimitStoreTest {

  private final InMemoryRateLimitStore store = new InMemoryRateLimitStore();
  private static final Window MINUTE = Window.Sliding.MINUTE;

  private static Demand tokens(long amount) {
    return new Demand("t:tokens", MINUTE, 100, amount, "tokens");
  }

  @Test
  void reservesUpToTheLimitThenRefusesWithTheTimeTheOldestAmountLeaves() {
    long t0 = 1_000_000;
    assertThat(store.tryReserve(List.of(tokens(60)), t0)).isInstanceOf(Reservation.Granted.class);
    assertThat(store.tryReserve(List.of(tokens(40)), t0 + 10_000)).isInstanceOf(Reservation.Granted.class);
    Reservation r = store.tryReserve(List.of(tokens(1)), t0 + 20_000);
    assertThat(r).isInstanceOfSatisfying(Reservation.Refused.class, no -> {
      assertThat(no.used()).isEqualTo(100);
      // the 60 placed at t0 leave the window when it moves past t0's bucket: 61 s after t0, i.e. 41 s from now
      assertThat(no.retryAfter()).isEqualTo(Duration.ofSeconds(41));
    });
    assertThat(store.tryReserve(List.of(tokens(1)), t0 + 61_000)).isInstanceOf(Reservation.Granted.class);
    assertThat(store.used("t:tokens", MINUTE, t0 + 61_000)).isEqualTo(41);
  }

  /**
   * Regression (GovernanceTest.noTenantExceedsItsTokenLimitUnderConcurrency): a caller that read the clock, then
   * waited for the lock while newer reservations reused the ring's buckets, counted only what was left of its own
   * window and overran the limit. It is now served at the counter's latest time.
   */
  @Test
  void aLateCallerIsServedAtTheCountersLatestTime() {
    assertThat(store.tryReserve(List.of(tokens(60)), 0)).isInstanceOf(Reservation.Granted.class);
    // 61.5 s later: the same ring slot as t = 0, so the 60 are gone from the counter
    assertThat(store.tryReserve(List.of(tokens(30)), 61_500)).isInstanceOf(Reservation.Granted.class);
    Reservation late = store.tryReserve(List.of(tokens(70)), 30_000);
    assertThat(late).isInstanceOfSatisfying(Reservation.Granted.class,
        g -> assertThat(g.atMillis()).as("served at the latest time").isEqualTo(61_500));
    assertThat(store.tryReserve(List.of(tokens(1)), 30_000)).as("the window at 61.5 s is full")
        .isInstanceOf(Reservation.Refused.class);
    assertThat(store.used("t:tokens", MINUTE, 30_000)).isEqualTo(100);
  }

  @Test
  void settlingCorrectsTheAmountWhileItIsInTheWindow() {
    Reservation.Granted g = (Reservation.Granted) store.tryReserve(List.of(tokens(80)), 0);
    store.settle(g, new long[] {30}, 5_000);
    assertThat(store.used("t:tokens", MINUTE, 5_000)).isEqualTo(30);
    Reservation.Granted h = (Reservation.Granted) store.tryReserve(List.of(tokens(70)), 6_000);
    store.settle(h, new long[] {90}, 7_000);
    assertThat(store.used("t:tokens", MINUTE, 7_000)).as("usage above the estimate is counted too").isEqualTo(120);
    store.settle(g, new long[] {0}, 200_000);
    assertThat(store.used("t:tokens", MINUTE, 200_000)).isZero();
  }

  @Test
  void allOrNothingAcrossKeys() {
    Demand a = new Demand("a", MINUTE, 10, 5, "a");
    Demand b = new Demand("b", MINUTE, 10, 11, "b");
    Reservation r = store.tryReserve(List.of(a, b), 0);
    assertThat(r).isInstanceOfSatisfying(Reservation.Refused.class, no -> {
      assertThat(no.demand()).isEqualTo(b);
      assertThat(no.retryAfter()).as("larger than the limit: the window's length").isEqualTo(Duration.ofMinutes(1));
    });
    assertThat(store.used("a", MINUTE, 0)).isZero();
  }

  @Test
  void twoDemandsOnOneKeyAreCheckedTogether() {
    Demand x = new Demand("k", MINUTE, 10, 6, "x");
    Demand y = new Demand("k", MINUTE, 10, 6, "y");
    assertThat(store.tryReserve(List.of(x, y), 0)).isInstanceOf(Reservation.Refused.class);
    assertThat(store.used("k", MINUTE, 0)).isZero();
  }

  @Test
  void concurrencyIsHeldUntilSettledOrCancelled() {
    Demand c = new Demand("c", Window.Concurrent.INSTANCE, 1, 1, "concurrent");
    Reservation.Granted g = (Reservation.Granted) store.tryReserve(List.of(c), 0);
    assertThat(store.tryReserve(List.of(c), 0)).isInstanceOf(Reservation.Refused.class);
    store.cancel(g, 1);
    assertThat(store.tryReserve(List.of(c), 2)).isInstanceOf(Reservation.Granted.class);
  }

  private static final long HOUR = 3_600_000;

  @Test
  void periodsRestartAndRefuseUntilTheirEnd() {
    Demand d = new Demand("b", new Window.Period(CalendarPeriod.HOUR), 100, 80, "budget");
    assertThat(store.tryReserve(List.of(d), 10)).isInstanceOf(Reservation.Granted.class);
    assertThat(store.tryReserve(List.of(d), 20)).isInstanceOfSatisfying(Reservation.Refused.class,
        no -> assertThat(no.retryAfter()).isEqualTo(Duration.ofMillis(HOUR - 20)));
    assertThat(store.tryReserve(List.of(d), HOUR)).isInstanceOf(Reservation.Granted.class);
  }

  /** A caller whose clock reads the previous period counts against the current one and does not reset it. */
  @Test
  void aLateCallerFromThePreviousPeriodDoesNotWipeTheCurrentOne() {
    Demand d = new Demand("b", new Window.Period(CalendarPeriod.HOUR), 100, 80, "budget");
    assertThat(store.tryReserve(List.of(d), HOUR)).isInstanceOf(Reservation.Granted.class);
    Demand late = new Demand("b", new Window.Period(CalendarPeriod.HOUR), 100, 30, "budget");
    assertThat(store.tryReserve(List.of(late), HOUR - 1)).as("80 + 30 > 100 in the current period")
        .isInstanceOf(Reservation.Refused.class);
    assertThat(store.used("b", new Window.Period(CalendarPeriod.HOUR), HOUR)).isEqualTo(80);
  }

  @Test
  void theStoreIsFoundByServiceLoader() {
    assertThat(dev.kinference.plugin.Plugins.load(RateLimitStore.class).names()).contains("in-memory");
  }
}
