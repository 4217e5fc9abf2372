package dev.kinference.policy.accounting;

import dev.kinference.routing.Usage;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Usage counters per tenant and model. Recording is lock-free (one {@link LongAdder} per counter); a snapshot reads
 * each counter once, so it may split a request recorded concurrently (its tokens counted, its request not yet), but
 * never loses or double-counts one. Thread-safe.
 */
public final class Accounting {

  private record Key(String tenant, String model) {}

  private static final class Counters {
    final LongAdder requests = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder input = new LongAdder();
    final LongAdder cached = new LongAdder();
    final LongAdder output = new LongAdder();
    final LongAdder cost = new LongAdder();
  }

  private final ConcurrentHashMap<Key, Counters> counters = new ConcurrentHashMap<>();
  private final InstantSource clock;

  public Accounting(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public Accounting() {
    this(InstantSource.system());
  }

  /**
   * Records a request that was sent.
   *
   * @param usage what it used (what was reported, or the best estimate)
   * @param costMicros its cost in millionths of the currency unit
   * @param failed whether it failed
   */
  public void recordRequest(String tenant, String model, Usage usage, long costMicros, boolean failed) {
    Counters c = counters(tenant, model);
    c.requests.increment();
    if (failed) {
      c.errors.increment();
    }
    c.input.add(usage.promptTokens());
    c.cached.add(Math.min(usage.cachedPromptTokens(), usage.promptTokens()));
    c.output.add(usage.completionTokens());
    c.cost.add(Math.max(0, costMicros));
  }

  /** Records a request refused before it was sent. */
  public void recordRejected(String tenant, String model) {
    counters(tenant, model).rejected.increment();
  }

  /** A copy of every counter, ordered by tenant then model. */
  public UsageSnapshot snapshot() {
    List<UsageRecord> out = new ArrayList<>(counters.size());
    counters.forEach((k, c) -> out.add(new UsageRecord(k.tenant(), k.model(), c.requests.sum(), c.errors.sum(),
        c.rejected.sum(), c.input.sum(), c.cached.sum(), c.output.sum(), c.cost.sum())));
    out.sort(Comparator.comparing(UsageRecord::tenant).thenComparing(UsageRecord::model));
    return new UsageSnapshot(clock.instant(), out);
  }

  private Counters counters(String tenant, String model) {
    return counters.computeIfAbsent(new Key(tenant, model), k -> new Counters());
  }
}
