package dev.kinference.policy.limits;

import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared store with a failure mode: what requests see while the shared store cannot be reached.
 *
 * <ul>
 *   <li>{@link FailureMode#OPEN} (the default): each replica enforces its share of every limit on its own, {@code
 *       ceil(limit / replicas)} counted in memory, so that the replicas together admit about the limit (at most
 *       {@code replicas - 1} units more from the rounding). What it admits and what its requests use is kept, and
 *       added to the shared store when it answers again ({@link RateLimitStore#absorb}).</li>
 *   <li>{@link FailureMode#CLOSED}: {@link #tryReserve} throws {@link StateStoreUnavailableException}; the gateway
 *       answers 503 with {@code Retry-After}.</li>
 * </ul>
 *
 * <p>In both modes a settlement that could not reach the store is kept and applied when it answers again, so no
 * request's usage is lost (up to {@value #MAX_PENDING} pending settlements; past that the oldest are dropped and
 * counted in {@link #lostSettlements()}). The store is marked down at its first failed call, logged once per outage,
 * and probed every {@code probeInterval} until it answers; requests meanwhile do not wait on it.
 *
 * <p>Thread-safe: any number of request threads; one probe thread replays what is pending.
 */
public final class ResilientStateStore implements RateLimitStore {

  private static final Logger log = LoggerFactory.getLogger(ResilientStateStore.class);
  private static final String LOCAL = "local:";
  static final int MAX_PENDING = 1_000_000;

  /** What requests see while the shared store is unreachable. */
  public enum FailureMode {
    /** Admit within this replica's share of each limit; reconcile afterwards. */
    OPEN,
    /** Refuse with 503. */
    CLOSED;

    /** {@code open} or {@code closed}. */
    public String cliName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A settlement or an absorption to apply to the shared store once it answers. */
  private sealed interface Pending permits Settle, Absorb {}

  private record Settle(Reservation.Granted granted, List<Long> actual, @Nullable UsageEntry usage, long atMillis)
      implements Pending {}

  private record Absorb(String id, List<Demand> demands, List<Long> amounts, @Nullable UsageEntry usage,
      long atMillis) implements Pending {}

  private static List<Long> copy(long[] values) {
    return java.util.Arrays.stream(values).boxed().toList();
  }

  private static long[] array(List<Long> values) {
    return values.stream().mapToLong(Long::longValue).toArray();
  }

  private final RateLimitStore remote;
  private final InMemoryRateLimitStore local = new InMemoryRateLimitStore();
  private final FailureMode mode;
  private final IntSupplier replicas;
  private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pendingCount = new AtomicInteger();
  private final AtomicLong lost = new AtomicLong();
  private final AtomicLong degradedAdmissions = new AtomicLong();
  private final AtomicLong outages = new AtomicLong();
  private final ScheduledExecutorService prober;
  private volatile boolean up = true;
  private final String instance = java.util.UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong localSeq = new AtomicLong();

  private ResilientStateStore(Builder b) {
    this.remote = Objects.requireNonNull(b.remote, "remote");
    this.mode = b.mode;
    this.replicas = b.replicas;
    this.prober = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-state-store-probe");
      t.setDaemon(true);
      return t;
    });
    long every = b.probeInterval.toMillis();
    var unused = prober.scheduleWithFixedDelay(this::probe, every, every, TimeUnit.MILLISECONDS);
  }

  /** A resilient store over {@code remote}. */
  public static Builder builder(RateLimitStore remote) {
    return new Builder(remote);
  }

  @Override
  public String name() {
    return remote.name();
  }

  /** The wrapped store's description, so logs name the store rather than this wrapper. */
  @Override
  public String toString() {
    return remote.toString();
  }

  @Override
  public boolean shared() {
    return remote.shared();
  }

  /** The store this one wraps. */
  public RateLimitStore remote() {
    return remote;
  }

  public FailureMode failureMode() {
    return mode;
  }

  /** Whether the shared store answered its last call. */
  public boolean up() {
    return up;
  }

  /** Settlements and absorptions waiting for the store to answer again. */
  public int pendingReconciliation() {
    return pendingCount.get();
  }

  /** Requests admitted on this replica's share while the store was down. */
  public long degradedAdmissions() {
    return degradedAdmissions.get();
  }

  /** Pending settlements dropped because more than {@value #MAX_PENDING} waited. */
  public long lostSettlements() {
    return lost.get();
  }

  /** How many times the store went down. */
  public long outages() {
    return outages.get();
  }

  @Override
  public Reservation tryReserve(List<Demand> demands, long nowMillis) {
    if (up) {
      try {
        return remote.tryReserve(demands, nowMillis);
      } catch (StateStoreUnavailableException e) {
        markDown(e);
      }
    }
    if (mode == FailureMode.CLOSED) {
      throw new StateStoreUnavailableException("the shared state store " + remote.name()
          + " is unreachable and the failure mode is closed");
    }
    int n = Math.max(1, replicas.getAsInt());
    List<Demand> share = new ArrayList<>(demands.size());
    for (Demand d : demands) {
      long limit = n == 1 ? d.limit() : (d.limit() + n - 1) / n;
      share.add(new Demand(d.key(), d.window(), limit, d.amount(), d.description()
          + (n == 1 ? "" : " (this replica's share, 1/" + n + ", while the shared state store is unreachable)")));
    }
    Reservation r = local.tryReserve(share, nowMillis);
    return switch (r) {
      case Reservation.Granted g -> {
        degradedAdmissions.incrementAndGet();
        yield new Reservation.Granted(demands, g.atMillis(), LOCAL + instance + ":" + localSeq.incrementAndGet()
            + ":" + g.ticket());
      }
      case Reservation.Refused no -> no;
    };
  }

  @Override
  public void settle(Reservation.Granted granted, long[] actual, @Nullable UsageEntry usage, long nowMillis) {
    if (granted.ticket().startsWith(LOCAL)) {
      String ticket = granted.ticket();
      Reservation.Granted mine = new Reservation.Granted(granted.demands(), granted.atMillis(),
          ticket.substring(ticket.indexOf(':', ticket.indexOf(':', LOCAL.length()) + 1) + 1));
      local.settle(mine, actual, null, nowMillis);
      apply(new Absorb(granted.ticket(), granted.demands(), copy(actual), usage, granted.atMillis()));
    } else {
      apply(new Settle(granted, copy(actual), usage, nowMillis));
    }
  }

  @Override
  public void absorb(String id, List<Demand> demands, long[] amounts, @Nullable UsageEntry usage, long atMillis) {
    apply(new Absorb(id, List.copyOf(demands), copy(amounts), usage, atMillis));
  }

  @Override
  public long used(String key, Window window, long nowMillis) {
    if (up) {
      try {
        return remote.used(key, window, nowMillis);
      } catch (StateStoreUnavailableException e) {
        // a read that failed does not decide the failure mode: the next reservation will
      }
    }
    return local.used(key, window, nowMillis);
  }

  /**
   * The shared store's totals; throws {@link StateStoreUnavailableException} while it cannot be read. A slow read
   * (a large admin query, a metrics scrape) does not put admissions into the failure mode.
   */
  @Override
  public List<UsageTotal> usage(UsageQuery query) {
    return remote.usage(query);
  }

  /**
   * The shared store's answer; throws {@link StateStoreUnavailableException} while it cannot be reached (the caller
   * decides what peers' shares are worth then). Does not put admissions into the failure mode.
   */
  @Override
  public java.util.Map<String, Long> sharePendingPrefillTokens(String replica, java.util.Map<String, Long> own,
      Duration ttl) {
    return remote.sharePendingPrefillTokens(replica, own, ttl);
  }

  @Override
  public boolean ping() {
    return up;
  }

  @Override
  public void close() {
    prober.shutdownNow();
    try {
      prober.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (up || remote.ping()) {
      drain(); // a last attempt, so that a clean shutdown leaves nothing behind
    }
    int left = pendingCount.get();
    if (left > 0) {
      log.warn("Closing with {} settlements the shared state store {} never received: their usage is lost",
          left, remote.name());
    }
    remote.close();
  }

  private void apply(Pending p) {
    if (up && pending.isEmpty()) {
      try {
        send(p);
        return;
      } catch (StateStoreUnavailableException e) {
        markDown(e);
      }
    }
    enqueue(p);
  }

  private void enqueue(Pending p) {
    pending.add(p);
    if (pendingCount.incrementAndGet() > MAX_PENDING && pending.poll() != null) {
      pendingCount.decrementAndGet();
      lost.incrementAndGet();
    }
  }

  private void send(Pending p) {
    switch (p) {
      case Settle s -> remote.settle(s.granted(), array(s.actual()), s.usage(), s.atMillis());
      case Absorb a -> remote.absorb(a.id(), a.demands(), array(a.amounts()), a.usage(), a.atMillis());
    }
  }

  private void markDown(StateStoreUnavailableException e) {
    if (up) {
      synchronized (this) {
        if (up) {
          up = false;
          outages.incrementAndGet();
          log.warn("The shared state store {} is unreachable ({}); {} until it answers again", remote.name(),
              e.getMessage(), mode == FailureMode.OPEN
                  ? "each replica enforces its share of every limit and reconciles afterwards"
                  : "requests are refused with 503 (failure mode closed)");
        }
      }
    }
  }

  private void probe() {
    try {
      if (!up) {
        if (!remote.ping()) {
          return;
        }
        int n = drain();
        if (n < 0) {
          return;
        }
        up = true;
        log.info("The shared state store {} answers again; {} settlements reconciled", remote.name(), n);
      }
      if (!pending.isEmpty()) {
        drain();
      }
    } catch (RuntimeException e) {
      log.debug("State store probe failed", e);
    }
  }

  /**
   * Applies what is pending, in order; the number applied, or -1 if the store failed again. One drain at a time, so
   * that no item is sent twice. An item the store refuses while it answers pings (a server error, not an outage)
   * is dropped and counted in {@link #lostSettlements()}, so that it cannot hold the others back.
   */
  private synchronized int drain() {
    int n = 0;
    Pending p;
    while ((p = pending.peek()) != null) {
      try {
        send(p);
        n++;
      } catch (StateStoreUnavailableException e) {
        if (!remote.ping()) {
          return -1;
        }
        lost.incrementAndGet();
        log.warn("The shared state store {} refused a settlement ({}); dropped", remote.name(), e.getMessage());
      }
      if (pending.remove(p)) {
        pendingCount.decrementAndGet();
      }
    }
    return n;
  }

  /** Configures a {@link ResilientStateStore}; not thread-safe. */
  public static final class Builder {
    private final RateLimitStore remote;
    private FailureMode mode = FailureMode.OPEN;
    private IntSupplier replicas = () -> 1;
    private Duration probeInterval = Duration.ofSeconds(1);

    private Builder(RateLimitStore remote) {
      this.remote = Objects.requireNonNull(remote, "remote");
    }

    /** What requests see while the store is unreachable. Default: {@link FailureMode#OPEN}. */
    public Builder failureMode(FailureMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * How many replicas share the store, read at each degraded admission (discovery may change it). Default 1.
     */
    public Builder replicas(IntSupplier replicas) {
      this.replicas = Objects.requireNonNull(replicas, "replicas");
      return this;
    }

    /** How often an unreachable store is tried again. Default 1 s; at least 10 ms. */
    public Builder probeInterval(Duration interval) {
      if (interval.toMillis() < 10) {
        throw new IllegalArgumentException("probeInterval must be at least 10 ms: " + interval);
      }
      this.probeInterval = interval;
      return this;
    }

    public ResilientStateStore build() {
      return new ResilientStateStore(this);
    }
  }
}
