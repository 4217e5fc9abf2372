package dev.kinference.policy.limits;

import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Usage totals of one process, by tenant, model and hour, day and month. Thread-safe and lock-free: one {@link
 * LongAdder} per number; a query may split a request recorded concurrently, never loses one.
 */
final class InMemoryUsageTotals {

  private static final CalendarPeriod[] KEPT = {CalendarPeriod.HOUR, CalendarPeriod.DAY, CalendarPeriod.MONTH};

  private record Key(String tenant, String model, CalendarPeriod granularity, long startMillis) {}

  private static final class Sums {
    final LongAdder requests = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder input = new LongAdder();
    final LongAdder cached = new LongAdder();
    final LongAdder output = new LongAdder();
    final LongAdder cost = new LongAdder();
    volatile String currency = "USD";
  }

  private final ConcurrentHashMap<Key, Sums> sums = new ConcurrentHashMap<>();

  void add(UsageEntry e, long atMillis) {
    for (CalendarPeriod g : KEPT) {
      Sums s = sums.computeIfAbsent(new Key(e.tenant(), e.model(), g, g.startMillis(atMillis)), k -> new Sums());
      s.requests.increment();
      if (e.failed()) {
        s.errors.increment();
      }
      s.input.add(e.inputTokens());
      s.cached.add(e.cachedInputTokens());
      s.output.add(e.outputTokens());
      s.cost.add(e.costMicros());
      s.currency = e.currency();
    }
  }

  List<UsageTotal> query(UsageQuery q) {
    long from = q.granularity().startMillis(q.from().toEpochMilli());
    long to = q.to().toEpochMilli();
    java.util.Map<String, UsageTotal> merged = new java.util.HashMap<>();
    sums.forEach((k, s) -> {
      if (k.granularity() == q.granularity() && k.startMillis() >= from && k.startMillis() < to
          && (q.tenant() == null || k.tenant().equals(q.tenant()))
          && (q.model() == null || k.model().equals(q.model()))) {
        Instant start = Instant.ofEpochMilli(k.startMillis());
        UsageTotal t = new UsageTotal(k.tenant(), q.model() == null ? "*" : q.model(), start,
            q.granularity().end(start), s.requests.sum(), s.errors.sum(), s.input.sum(), s.cached.sum(),
            s.output.sum(), s.cost.sum(), s.currency);
        merged.merge(k.tenant() + '\u0000' + k.startMillis(), t, UsageTotal::plus);
      }
    });
    List<UsageTotal> out = new ArrayList<>(merged.values());
    out.sort(Comparator.comparing(UsageTotal::tenant).thenComparing(UsageTotal::from));
    return out;
  }
}
