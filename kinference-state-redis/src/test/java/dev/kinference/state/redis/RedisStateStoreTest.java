package dev.kinference.state.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.limits.Demand;
import dev.kinference.policy.limits.Reservation;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import dev.kinference.policy.limits.StateStores;
import dev.kinference.policy.limits.Window;
import dev.kinference.testkit.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Redis store against a real redis-server on a free loopback port. */
class RedisStateStoreTest {

  private static RedisServer redis;

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  private static RedisStateStore store(String prefix) {
    return RedisStateStore.builder(redis.uri()).keyPrefix(prefix).build();
  }

  private static Demand tokens(String key, long limit, long amount) {
    return new Demand(key, Window.Sliding.MINUTE, limit, amount, "tokensPerMinute");
  }

  @Test
  void slidingWindowsRefuseWhatWouldExceedTheLimitAndSettleToTheActualAmount() {
    try (RedisStateStore s = store("t1:")) {
      Reservation first = s.tryReserve(List.of(tokens("k", 100, 60)), 0);
      assertThat(first).isInstanceOf(Reservation.Granted.class);
      assertThat(s.tryReserve(List.of(tokens("k", 100, 50)), 0)).isInstanceOfSatisfying(Reservation.Refused.class,
          no -> {
            assertThat(no.used()).isEqualTo(60);
            assertThat(no.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(61));
          });
      s.settle((Reservation.Granted) first, new long[] {20}, 0);
      assertThat(s.used("k", Window.Sliding.MINUTE, 0)).isEqualTo(20);
      assertThat(s.tryReserve(List.of(tokens("k", 100, 50)), 0)).isInstanceOf(Reservation.Granted.class);
    }
  }

  @Test
  void allOrNothing_aRefusedDemandLeavesTheOthersUntouched() {
    try (RedisStateStore s = store("t2:")) {
      assertThat(s.tryReserve(List.of(tokens("b", 10, 10)), 0)).isInstanceOf(Reservation.Granted.class);
      assertThat(s.tryReserve(List.of(tokens("a", 100, 5), tokens("b", 10, 1)), 0))
          .isInstanceOfSatisfying(Reservation.Refused.class, no -> assertThat(no.demand().key()).isEqualTo("b"));
      assertThat(s.used("a", Window.Sliding.MINUTE, 0)).isZero();
    }
  }

  @Test
  void windowsAreTheServersClock_notTheCallers() {
    try (RedisStateStore s = store("t3:")) {
      long before = System.currentTimeMillis();
      Reservation r = s.tryReserve(List.of(tokens("k", 100, 1)), 42); // a caller whose clock reads 1970
      assertThat(((Reservation.Granted) r).atMillis()).isBetween(before - 5_000, System.currentTimeMillis() + 5_000);
    }
  }

  @Test
  void budgetsCountTheCurrentPeriodAndRefuseUntilItsEnd() {
    try (RedisStateStore s = store("t4:")) {
      Demand budget = new Demand("budget", new Window.Period(CalendarPeriod.DAY), 100, 80, "daily budget");
      assertThat(s.tryReserve(List.of(budget), 0)).isInstanceOf(Reservation.Granted.class);
      long now = System.currentTimeMillis();
      assertThat(s.tryReserve(List.of(budget), 0)).isInstanceOfSatisfying(Reservation.Refused.class, no ->
          assertThat(no.retryAfter().toMillis()).isCloseTo(CalendarPeriod.DAY.endMillis(now) - now,
              org.assertj.core.data.Offset.offset(5_000L)));
      assertThat(s.used("budget", new Window.Period(CalendarPeriod.DAY), 0)).isEqualTo(80);
    }
  }

  @Test
  void aConcurrencySlotOfAProcessThatDiedIsFreedWhenItsLeaseExpires() throws Exception {
    Demand slot = new Demand("c", Window.Concurrent.INSTANCE, 1, 1, "concurrentRequests");
    RedisStateStore dying = RedisStateStore.builder(redis.uri()).keyPrefix("t5:").leaseTime(Duration.ofSeconds(1))
        .build();
    try (RedisStateStore other = store("t5:")) {
      assertThat(dying.tryReserve(List.of(slot), 0)).isInstanceOf(Reservation.Granted.class);
      Thread.sleep(1_500); // longer than the lease: the owner's renewals keep it
      assertThat(other.tryReserve(List.of(slot), 0)).as("renewed while its owner lives")
          .isInstanceOf(Reservation.Refused.class);
      dying.close(); // dies without settling
      Thread.sleep(1_300);
      Reservation r = other.tryReserve(List.of(slot), 0);
      assertThat(r).as("freed within the lease time").isInstanceOf(Reservation.Granted.class);
      other.settle((Reservation.Granted) r, new long[] {0}, 0);
      assertThat(other.used("c", Window.Concurrent.INSTANCE, 0)).isZero();
    }
  }

  /**
   * Regression (the test itself): run across a full hour it found the totals in the new hour's period. The settles
   * may straddle a period boundary, so each tenant's periods are summed, and each period starts on its boundary.
   */
  @Test
  void usageTotalsAddUpByHourDayAndMonth() {
    try (RedisStateStore s = store("t6:")) {
      Reservation.Granted none = new Reservation.Granted(List.of(), 0);
      Instant before = Instant.now().minusSeconds(5);
      s.settle(none, new long[0], new UsageEntry("search", "chat", false, 100, 40, 10, 2_000, "EUR"), 0);
      s.settle(none, new long[0], new UsageEntry("search", "small", true, 5, 0, 1, 50, "EUR"), 0);
      s.settle(none, new long[0], new UsageEntry("other", "chat", false, 7, 0, 3, 0, "USD"), 0);
      Instant after = Instant.now().plusSeconds(5);
      for (CalendarPeriod g : List.of(CalendarPeriod.HOUR, CalendarPeriod.DAY, CalendarPeriod.MONTH)) {
        List<UsageTotal> all = s.usage(new UsageQuery(null, null, before, after, g));
        assertThat(all).extracting(UsageTotal::tenant).containsOnly("other", "search");
        assertThat(all).allSatisfy(t -> {
          assertThat(t.from()).isEqualTo(g.start(t.from())).isBetween(g.start(before), g.start(after));
          assertThat(t.to()).isEqualTo(g.end(t.from()));
        });
        UsageTotal search = all.stream().filter(t -> t.tenant().equals("search")).reduce(UsageTotal::plus)
            .orElseThrow();
        assertThat(search.requests()).isEqualTo(2);
        assertThat(search.errors()).isEqualTo(1);
        assertThat(search.inputTokens()).isEqualTo(105);
        assertThat(search.cachedTokens()).isEqualTo(40);
        assertThat(search.outputTokens()).isEqualTo(11);
        assertThat(search.totalTokens()).isEqualTo(116);
        assertThat(search.costMicros()).isEqualTo(2_050);
        assertThat(search.currency()).isEqualTo("EUR");
      }
      List<UsageTotal> chat = s.usage(new UsageQuery("search", "chat", before, after, CalendarPeriod.MONTH));
      assertThat(chat.stream().mapToLong(UsageTotal::requests).sum()).isEqualTo(1);
      assertThat(chat).allSatisfy(t -> assertThat(t.model()).isEqualTo("chat"));
    }
  }

  /** The scripts' calendar (Lua) and CalendarPeriod (Java) agree, leap days and year ends included. */
  @Test
  void theScriptsCalendarAgreesWithJavas() {
    try (RedisStateStore s = store("t7:")) {
      List<Instant> times = List.of(Instant.parse("2024-02-29T23:59:59Z"), Instant.parse("2023-12-31T23:00:00Z"),
          Instant.parse("2026-03-01T00:00:00Z"), Instant.now().minus(Duration.ofDays(3)),
          Instant.now().minus(Duration.ofHours(30)));
      for (Instant t : times) {
        s.absorb("cal-" + t, List.of(), new long[0], new UsageEntry("cal" + t.getEpochSecond(), "m", false, 1, 0, 0, 0, "USD"),
            t.toEpochMilli());
        for (CalendarPeriod g : List.of(CalendarPeriod.HOUR, CalendarPeriod.DAY, CalendarPeriod.MONTH)) {
          Duration kept = g == CalendarPeriod.MONTH ? Duration.ofDays(5 * 366) : Duration.ofDays(39);
          if (t.plus(kept).isBefore(Instant.now())) {
            continue; // already past its retention: expired at once
          }
          List<UsageTotal> found = s.usage(new UsageQuery("cal" + t.getEpochSecond(), null, t, t.plusMillis(1), g));
          assertThat(found).as("%s %s", g, t).singleElement()
              .satisfies(u -> assertThat(u.from()).isEqualTo(g.start(t)));
        }
      }
    }
  }

  @Test
  void everyKeyExpires() {
    try (RedisStateStore s = store("t8:")) {
      Reservation r = s.tryReserve(List.of(tokens("k", 100, 1), new Demand("b",
          new Window.Period(CalendarPeriod.MONTH), 100, 1, "budget"),
          new Demand("c", Window.Concurrent.INSTANCE, 5, 1, "concurrent")), 0);
      s.settle((Reservation.Granted) r, new long[] {1, 1, 0},
          new UsageEntry("x", "m", false, 1, 0, 0, 0, "USD"), 0);
      var sync = s.conn().sync();
      List<String> keys = sync.keys("t8:*");
      assertThat(keys).isNotEmpty();
      assertThat(keys).anyMatch(k -> k.endsWith("usage:tenants")).anyMatch(k -> k.contains("op:settled:"));
      for (String k : keys) {
        assertThat(sync.pttl(k)).as(k).isPositive();
      }
    }
  }

  /**
   * Replicas' pending prefill tokens: each sees the others' sum per endpoint, never its own; an expired share is
   * removed by the next call; the hashes expire; bad input is refused and writes nothing.
   */
  @Test
  void replicasSharePendingPrefillTokensPerEndpointUntilTheirSharesExpire() throws Exception {
    try (RedisStateStore a = store("t12:"); RedisStateStore b = store("t12:")) {
      // long enough for a loaded machine: b's first call connects first
      Duration ttl = Duration.ofSeconds(5);
      assertThat(b.ping()).isTrue();
      assertThat(a.sharePendingPrefillTokens("a", java.util.Map.of("e0", 700L, "e1", 0L), ttl))
          .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("e0", 0L, "e1", 0L));
      assertThat(b.sharePendingPrefillTokens("b", java.util.Map.of("e0", 50L, "e1", 20L), ttl))
          .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("e0", 700L, "e1", 0L));
      assertThat(a.sharePendingPrefillTokens("a", java.util.Map.of("e0", 300L, "e1", 0L), ttl))
          .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("e0", 50L, "e1", 20L));
      var sync = a.conn().sync();
      assertThat(sync.pttl("t12:inflight:e0")).isPositive().isLessThanOrEqualTo(5000);

      assertThatThrownBy(() -> b.sharePendingPrefillTokens("b", java.util.Map.of("e0", -1L), ttl))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
      assertThatThrownBy(() -> b.sharePendingPrefillTokens("", java.util.Map.of("e0", 1L), ttl))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(sync.hget("t12:inflight:e0", "b")).as("the refused calls wrote nothing").startsWith("50|");

      sync.hset("t12:inflight:e0", "b", "50|1"); // b's share lapsed long ago: a's next call drops it
      assertThat(a.sharePendingPrefillTokens("a", java.util.Map.of("e0", 300L), ttl)).containsEntry("e0", 0L);
      assertThat(sync.hkeys("t12:inflight:e0")).containsExactly("a");
    }
  }

  /** A settlement retried after a timeout (it may have run) applies once. */
  @Test
  void aSettlementAppliesOnceWhenItIsRetried() {
    try (RedisStateStore s = store("t9:")) {
      Reservation.Granted g = (Reservation.Granted) s.tryReserve(List.of(tokens("k", 1000, 100)), 0);
      UsageEntry u = new UsageEntry("once", "m", false, 10, 0, 20, 5, "USD");
      s.settle(g, new long[] {30}, u, 0);
      s.settle(g, new long[] {30}, u, 0);
      assertThat(s.used("k", Window.Sliding.MINUTE, 0)).isEqualTo(30);
      Instant now = Instant.now();
      assertThat(s.usage(new UsageQuery("once", null, now.minusSeconds(5), now.plusSeconds(1), CalendarPeriod.DAY)))
          .singleElement().satisfies(t -> assertThat(t.requests()).isEqualTo(1));
      s.absorb("a-1", List.of(tokens("k", 1000, 0)), new long[] {7}, null, System.currentTimeMillis());
      s.absorb("a-1", List.of(tokens("k", 1000, 0)), new long[] {7}, null, System.currentTimeMillis());
      assertThat(s.used("k", Window.Sliding.MINUTE, 0)).isEqualTo(37);
    }
  }

  @Test
  void anUnreachableServerFailsEachCallWithinItsTimeout() throws Exception {
    int closedPort;
    try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    try (var s = StateStores.open("redis://127.0.0.1:" + closedPort, null, Duration.ofMillis(300))) {
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> s.tryReserve(List.of(tokens("k", 10, 1)), 0))
          .isInstanceOf(StateStoreUnavailableException.class).hasMessageContaining("127.0.0.1:" + closedPort);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
      assertThat(s.ping()).isFalse();
    }
  }

  @Test
  void urisNameTheirStoreAndPasswordsNeverAppearInMessages() {
    assertThatThrownBy(() -> StateStores.open("mongodb://u:secret@h/", null, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis")
        .hasMessageNotContaining("secret");
    assertThat(StateStores.redact("redis://user:s3cret@host:6379/0")).isEqualTo("redis://***@host:6379/0");
    assertThat(StateStores.redact("redis://s3cret@host:6379")).as("Lettuce reads a lone userinfo as a password")
        .isEqualTo("redis://***@host:6379");
    try (var s = StateStores.open(redis.uri() + "/2", null, Duration.ofSeconds(1))) {
      assertThat(s).isInstanceOf(RedisStateStore.class);
      assertThat(s.ping()).isTrue();
    }
  }
}
