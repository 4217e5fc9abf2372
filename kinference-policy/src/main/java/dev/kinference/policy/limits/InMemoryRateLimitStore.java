package dev.kinference.policy.limits;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import org.jspecify.annotations.Nullable;

/**
 * Counters in this process's memory, named {@code in-memory}.
 *
 * <p>A sliding window of length L is kept as 61 buckets of L/60 each; a reservation is placed in the bucket of its
 * time, and the window counts the current bucket and the 60 before it, so it covers at least L and the limit holds
 * over every window of length L. Each counter's time only moves forward: a caller whose clock reading is older than
 * the counter's latest reservation (it read the clock, then waited for the lock) is served at that latest time, and
 * its grant says so ({@link Reservation.Granted#atMillis}). Otherwise a caller late by more than the ring would count
 * buckets that newer reservations had already reused, and exceed the limit. A period counter restarts when the
 * counter's time enters a new calendar period. A concurrency counter holds reserved amounts until they are settled.
 * Usage totals are kept by hour, day and month for as long as the process runs.
 *
 * <p>Thread-safe without a global lock: each counter has its own lock, and a reservation locks the counters it
 * touches in key order (so two reservations never deadlock), checks every demand, then applies them all.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

  private static final int BUCKETS = 61;

  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final InMemoryUsageTotals usage = new InMemoryUsageTotals();
  private final PendingPrefillShares pendingPrefill = new PendingPrefillShares(System::nanoTime);

  /** Public for {@link java.util.ServiceLoader}. */
  public InMemoryRateLimitStore() {}

  @Override
  public String name() {
    return "in-memory";
  }

  /** Shares among the replicas in this process that use this store (tests, embedded gateways). */
  @Override
  public java.util.Map<String, Long> sharePendingPrefillTokens(String replica, java.util.Map<String, Long> own,
      Duration ttl) {
    return pendingPrefill.share(replica, own, ttl);
  }

  @Override
  public Reservation tryReserve(List<Demand> demands, long nowMillis) {
    List<Integer> order = new ArrayList<>(demands.size());
    for (int i = 0; i < demands.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparing((Integer i) -> demands.get(i).key()).thenComparing(i -> i));
    Counter[] locked = new Counter[demands.size()];
    int held = 0;
    try {
      Counter previous = null;
      for (int i : order) {
        Counter c = counter(demands.get(i));
        locked[i] = c;
        if (c != previous) {
          c.lock.lock();
          held++;
          previous = c;
        }
      }
      long now = nowMillis;
      for (Counter c : locked) {
        now = Math.max(now, c.latestMillis);
      }
      // Several demands may share a counter: check their sum.
      for (int i : order) {
        Demand d = demands.get(i);
        long pending = 0;
        for (int j : order) {
          if (locked[j] == locked[i] && j <= i) {
            pending += demands.get(j).amount();
          }
        }
        long used = locked[i].used(d.window(), now);
        if (used + pending > d.limit()) {
          return new Reservation.Refused(d, used, locked[i].retryAfter(d, used + pending - d.amount(), now));
        }
      }
      for (int i : order) {
        locked[i].add(demands.get(i), demands.get(i).amount(), now);
        locked[i].latestMillis = now;
      }
      return new Reservation.Granted(demands, now);
    } finally {
      Counter previous = null;
      for (int i : order) {
        if (held == 0) {
          break;
        }
        Counter c = locked[i];
        if (c != null && c != previous) {
          c.lock.unlock();
          held--;
          previous = c;
        }
      }
    }
  }

  @Override
  public void settle(Reservation.Granted granted, long[] actual, @Nullable UsageEntry entry, long nowMillis) {
    List<Demand> demands = granted.demands();
    if (actual.length != demands.size()) {
      throw new IllegalArgumentException("one actual amount per demand: " + demands.size() + " != " + actual.length);
    }
    for (int i = 0; i < demands.size(); i++) {
      Demand d = demands.get(i);
      Counter c = counters.get(d.key());
      if (c == null) {
        continue;
      }
      c.lock.lock();
      try {
        c.settle(d, Math.max(0, actual[i]), granted.atMillis(), Math.max(nowMillis, c.latestMillis));
      } finally {
        c.lock.unlock();
      }
    }
    if (entry != null) {
      usage.add(entry, nowMillis);
    }
  }

  @Override
  public void absorb(String id, List<Demand> demands, long[] amounts, @Nullable UsageEntry entry, long atMillis) {
    for (int i = 0; i < demands.size(); i++) {
      Demand d = demands.get(i);
      if (d.window() instanceof Window.Concurrent) {
        continue;
      }
      Counter c = counter(d);
      c.lock.lock();
      try {
        c.add(d, Math.max(0, amounts[i]), Math.max(atMillis, c.latestMillis));
      } finally {
        c.lock.unlock();
      }
    }
    if (entry != null) {
      usage.add(entry, atMillis);
    }
  }

  @Override
  public List<UsageTotal> usage(UsageQuery query) {
    return usage.query(query);
  }

  @Override
  public long used(String key, Window window, long nowMillis) {
    Counter c = counters.get(key);
    if (c == null) {
      return 0;
    }
    c.lock.lock();
    try {
      return c.used(window, Math.max(nowMillis, c.latestMillis));
    } finally {
      c.lock.unlock();
    }
  }

  private Counter counter(Demand d) {
    return counters.computeIfAbsent(d.key(), k -> new Counter());
  }

  /** One key's counts; guarded by its lock. */
  private static final class Counter {
    final ReentrantLock lock = new ReentrantLock();
    // the time of the latest reservation: the counter's clock never goes back
    long latestMillis = Long.MIN_VALUE;
    // sliding
    long bucketMillis;
    final long[] epochs = new long[BUCKETS];
    final long[] amounts = new long[BUCKETS];
    // period
    long periodStart = Long.MIN_VALUE;
    long periodTotal;
    // concurrent
    long held;

    long used(Window w, long now) {
      return switch (w) {
        case Window.Sliding s -> slidingSum(s, now);
        // a late caller's older period counts against the current one: periods never go back either
        case Window.Period p -> p.calendar().startMillis(now) <= periodStart ? periodTotal : 0;
        case Window.Concurrent c -> held;
      };
    }

    void add(Demand d, long amount, long now) {
      switch (d.window()) {
        case Window.Sliding s -> {
          long epoch = epoch(s, now);
          int b = (int) Math.floorMod(epoch, (long) BUCKETS);
          if (epochs[b] < epoch) {
            epochs[b] = epoch;
            amounts[b] = 0;
          }
          // a slot already holding a later time (another thread read the clock after this one) takes the amount:
          // it then counts a little longer, never shorter
          amounts[b] = saturatedAdd(amounts[b], amount);
        }
        case Window.Period p -> {
          long start = p.calendar().startMillis(now);
          if (start > periodStart) {
            periodStart = start;
            periodTotal = 0;
          }
          periodTotal = saturatedAdd(periodTotal, amount);
        }
        case Window.Concurrent c -> held = saturatedAdd(held, amount);
      }
    }

    void settle(Demand d, long actual, long reservedAt, long now) {
      long delta = actual - d.amount();
      switch (d.window()) {
        case Window.Sliding s -> {
          long epoch = epoch(s, reservedAt);
          int b = (int) Math.floorMod(epoch, (long) BUCKETS);
          if (epochs[b] == epoch && epoch > epoch(s, now) - BUCKETS) {
            amounts[b] = Math.max(0, saturatedAdd(amounts[b], delta));
          }
        }
        case Window.Period p -> {
          if (p.calendar().startMillis(reservedAt) == periodStart) {
            periodTotal = Math.max(0, saturatedAdd(periodTotal, delta));
          }
        }
        case Window.Concurrent c -> held = Math.max(0, held - d.amount());
      }
    }

    Duration retryAfter(Demand d, long usedBefore, long now) {
      return switch (d.window()) {
        case Window.Sliding s -> slidingRetry(s, d, usedBefore, now);
        case Window.Period p -> Duration.ofMillis(Math.max(1, p.calendar().endMillis(now) - now));
        case Window.Concurrent c -> Duration.ofSeconds(1);
      };
    }

    private long epoch(Window.Sliding s, long now) {
      long width = Math.max(1, s.length().toMillis() / 60);
      if (bucketMillis != width) {
        // first use, or the window length changed: start afresh
        bucketMillis = width;
        java.util.Arrays.fill(epochs, Long.MIN_VALUE);
        java.util.Arrays.fill(amounts, 0);
      }
      return Math.floorDiv(now, width);
    }

    private long slidingSum(Window.Sliding s, long now) {
      long cur = epoch(s, now);
      long sum = 0;
      for (int i = 0; i < BUCKETS; i++) {
        // later buckets count too: a caller whose clock reading is older than another's still sees its amounts
        if (epochs[i] > cur - BUCKETS) {
          sum = saturatedAdd(sum, amounts[i]);
        }
      }
      return sum;
    }

    /** When enough of the oldest buckets will have left the window for {@code d} to fit. */
    private Duration slidingRetry(Window.Sliding s, Demand d, long used, long now) {
      long cur = epoch(s, now);
      if (d.amount() > d.limit()) {
        return s.length();
      }
      long mustFree = used + d.amount() - d.limit();
      long freed = 0;
      for (long e = cur - BUCKETS + 1; e <= cur; e++) {
        int b = (int) Math.floorMod(e, (long) BUCKETS);
        if (epochs[b] == e) {
          freed += amounts[b];
        }
        if (freed >= mustFree) {
          long leavesAt = (e + BUCKETS) * bucketMillis;
          return Duration.ofMillis(Math.max(1, leavesAt - now));
        }
      }
      return s.length();
    }

    private static long saturatedAdd(long a, long b) {
      long r = a + b;
      if (((a ^ r) & (b ^ r)) < 0) {
        return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
      }
      return r;
    }
  }
}
