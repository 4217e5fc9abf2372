package dev.kinference.gateway;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.limits.RateLimitStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes router replicas behind one Service (gateway replicas, or {@code kinference epp} pickers behind one
 * InferencePool, both built by {@link PolicyGateway}) agree on the servers' in-flight prefill: once per interval (the
 * scrape interval) this replica publishes, through the shared state store, the uncached prompt tokens it sent to each
 * endpoint that have not produced a first token, and sets each endpoint's {@link
 * EndpointState#updatePeerPendingPrefillTokens peer share} to what the other replicas published. Without it each
 * replica takes a server it has not sent to lately for idle while another's prompts are still in their prefill,
 * which the scraped queue does not show (docs/BENCHMARKS.md, "Router replicas", which measures this as
 * {@code NAME@Ns}). One store call per interval on its own thread: no request waits for it.
 *
 * <p>A published share lapses {@link #ttl} after its last write, so a replica that stops is forgotten. While the
 * store does not answer, the peers' shares last read stay for the same time and then fall to 0 (each replica counts
 * its own, as independent replicas do); the outage is logged once, and requests keep flowing.
 *
 * <p>Thread-safe: one scheduled thread writes the peer shares, which are volatile in {@link EndpointState}.
 */
final class PeerPrefillSharing implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PeerPrefillSharing.class);
  /** The shortest time a share counts, so that a late tick (a GC pause, a slow store) does not make it flicker. */
  static final Duration MIN_TTL = Duration.ofMillis(500);

  private final Fleet fleet;
  private final RateLimitStore store;
  private final String replica;
  private final Duration ttl;
  private final ScheduledExecutorService ticker;
  // Written and read on the ticker's thread only.
  private long lastAnsweredNanos = System.nanoTime();
  private boolean failing;
  private boolean peersZeroed;
  private volatile boolean closed;

  private PeerPrefillSharing(Fleet fleet, RateLimitStore store, String replica, Duration interval) {
    this.fleet = fleet;
    this.store = store;
    this.replica = replica;
    Duration threeIntervals = interval.multipliedBy(3);
    this.ttl = threeIntervals.compareTo(MIN_TTL) > 0 ? threeIntervals : MIN_TTL;
    this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-peer-prefill-sharing");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Starts sharing every {@code interval} under a new replica id (the host name and a random suffix).
   *
   * @throws IllegalArgumentException if {@code interval} is not positive
   */
  static PeerPrefillSharing start(Fleet fleet, RateLimitStore store, Duration interval) {
    return start(fleet, store, newReplicaId(), interval);
  }

  /** As {@link #start(Fleet, RateLimitStore, Duration)} under the given replica id (unique among the replicas). */
  static PeerPrefillSharing start(Fleet fleet, RateLimitStore store, String replica, Duration interval) {
    Objects.requireNonNull(fleet, "fleet");
    Objects.requireNonNull(store, "store");
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("sharing interval must be positive: " + interval);
    }
    PeerPrefillSharing sharing = new PeerPrefillSharing(fleet, store, replica, interval);
    long every = Math.max(1, interval.toMillis());
    var unused = sharing.ticker.scheduleWithFixedDelay(sharing::shareOnce, 0, every, TimeUnit.MILLISECONDS);
    log.info("Sharing in-flight prefill with the other replicas through {} as replica {}, every {} ms",
        store, replica, every);
    return sharing;
  }

  /** How long a published share counts after its last write. */
  Duration ttl() {
    return ttl;
  }

  /** This replica's id in the store. */
  String replica() {
    return replica;
  }

  /** One exchange with the store; never throws (a failure is logged once per outage). */
  void shareOnce() {
    List<EndpointState> states = fleet.endpoints().stream().filter(s -> !s.endpoint().isExternal()).toList();
    Map<String, Long> own = new HashMap<>(states.size() * 2);
    for (EndpointState s : states) {
      own.put(s.id(), Math.max(0, s.pendingPrefillTokens()));
    }
    Map<String, Long> peers;
    try {
      peers = store.sharePendingPrefillTokens(replica, own, ttl);
    } catch (RuntimeException e) {
      onFailure(states, e);
      return;
    }
    lastAnsweredNanos = System.nanoTime();
    peersZeroed = false;
    if (failing) {
      failing = false;
      log.info("The state store answers again: replica {} shares in-flight prefill with the others again", replica);
    }
    for (EndpointState s : states) {
      Long tokens = peers.get(s.id());
      s.updatePeerPendingPrefillTokens(tokens == null ? 0 : Math.max(0, tokens));
    }
  }

  private void onFailure(List<EndpointState> states, RuntimeException e) {
    if (closed) {
      return; // a call cut short by close() is no outage
    }
    if (!failing) {
      failing = true;
      log.warn("Replica {} cannot share in-flight prefill with the other replicas ({}); after {} ms each counts "
          + "only its own until the state store answers", replica, e.getMessage(), ttl.toMillis());
    }
    if (!peersZeroed && System.nanoTime() - lastAnsweredNanos >= ttl.toNanos()) {
      states.forEach(s -> s.updatePeerPendingPrefillTokens(0));
      peersZeroed = true;
    }
  }

  private static String newReplicaId() {
    String host = System.getenv("HOSTNAME");
    String name = host == null || host.isBlank() ? "replica" : host.strip().replaceAll("\\s+", "-");
    return name + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @Override
  public void close() {
    closed = true;
    ticker.shutdownNow();
    try {
      ticker.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
