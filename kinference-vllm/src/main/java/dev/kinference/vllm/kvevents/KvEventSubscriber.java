package dev.kinference.vllm.kvevents;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.OffloadedPrefixes;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.vllm.VllmLabels;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;
import org.zeromq.ZEvent;
import org.zeromq.ZMQ;
import org.zeromq.ZMonitor;

/**
 * Subscribes to one vLLM server's KV-cache events (or one data-parallel rank's) and applies them, in order, to a
 * {@link CacheIndex} on behalf of one {@link EndpointState}.
 *
 * <p>Wire protocol (vllm/distributed/kv_events.py): a SUB socket receives three-frame messages {@code [topic,
 * seq, payload]}, {@code seq} an unsigned 64-bit big-endian counter starting at 0 per server process, the payload
 * a msgpack {@code KVEventBatch} ({@link KvEventDecoder}). The optional replay socket is a ROUTER: this subscriber
 * sends {@code ["", start_seq]} from a DEALER and reads {@code ["", seq, payload]} or {@code ["", topic, seq,
 * payload]} replies until the end marker (seq {@code ff..ff}, empty payload).
 *
 * <p>What happens to the sequence, in order of the checks:
 * <ol>
 *   <li>the first message, numbered n &gt; 0, with a replay socket: batches 0..n-1 still buffered by the server are
 *       replayed first, so a router that starts after its servers learns what they already hold;</li>
 *   <li>a number not above the last one: the server restarted (its counter starts at 0 again); the endpoint's
 *       entries are cleared, and with a replay socket what the new process published before this message is
 *       replayed;</li>
 *   <li>a number above last + 1: a gap. With a replay socket the missing batches are replayed and applied before
 *       this message; if the replay fails or the server no longer buffers them, or without a replay socket, the
 *       endpoint's entries are cleared and rebuilt from the events that follow;</li>
 *   <li>a frame that is not three frames with an 8-byte sequence is rejected and counted; a payload that does not
 *       decode is rejected, counted, and (its events being lost) the endpoint's entries are cleared. Every
 *       rejection is logged with its reason; the subscriber keeps running.</li>
 * </ol>
 * A lost connection is re-established by ZeroMQ with exponential backoff ({@link Builder#reconnect}). Since a server
 * that restarted meanwhile may already have published past the last number seen, the first message after a reported
 * disconnection is treated like a first message: the endpoint's entries are cleared and rebuilt from what the replay
 * socket still buffers (or from new events). A server silent for twice the longest backoff plus a second, or silent
 * since its endpoint's health (set by a metrics scraper) went down and came back, is asked through the replay socket
 * whether it still holds the last batch applied, byte for byte: if it does and has nothing newer, nothing changes; if
 * it has newer batches they are applied (this socket missed them and is replaced); if not, it restarted or moved on
 * beyond its buffer, and the entries are rebuilt from what it buffers; if nothing was applied yet, what it buffers is
 * applied and the socket replaced (a socket deaf from its first connection still learns what the server holds). Without
 * a replay socket, a silent socket is replaced only when its connection was reported lost or it never delivered
 * anything.
 *
 * <p>These rules live in {@link KvEventSequencer}, which sees no socket; the sockets are {@link KvEventSockets}'s: this
 * class owns the thread, carries out the sequencer's actions and counts what it did.
 *
 * <p>Threading: one daemon thread per subscriber receives and applies, so events of one endpoint are applied one
 * at a time in order, and different endpoints proceed in parallel. {@link #stats()} may be read from any thread.
 */
public final class KvEventSubscriber implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventSubscriber.class);
  /**
   * Told what the subscriber does, on its thread, in order. Implementations must be quick and must not throw; a
   * throwing listener is logged and ignored.
   */
  public interface Listener {
    /** A batch was decoded and applied; {@code replayed} if it came from the replay socket. */
    default void onBatch(EndpointState endpoint, long seq, KvEventBatch batch, boolean replayed) {}

    /** Batches {@code expected} up to {@code received - 1} were missed; {@code repaired} if the replay filled them. */
    default void onGap(EndpointState endpoint, long expected, long received, boolean repaired) {}

    /** The sequence went back from {@code last} to {@code received}: the server restarted; its entries were cleared. */
    default void onRestart(EndpointState endpoint, long last, long received) {}

    /** A frame was rejected for {@code reason}. */
    default void onRejected(EndpointState endpoint, String reason) {}
  }

  /**
   * What the subscriber has done so far.
   *
   * @param batches batches applied (live and replayed)
   * @param events events applied
   * @param blocks blocks named by applied events (stored plus removed)
   * @param skippedEvents events decoded but not applied to the index: unknown types, KV-cache groups other than the
   *     indexed one (tracked apart, see {@link HybridCacheIndex}), tiers other than the GPU
   * @param gaps gaps in the sequence
   * @param repairedGaps gaps filled completely through the replay socket
   * @param replayedBatches batches applied from the replay socket
   * @param restarts server restarts detected
   * @param rejectedFrames frames rejected (wrong shape or undecodable payload)
   * @param resyncs times the endpoint's entries were cleared to resynchronise (gap not repaired, restart, lost batch)
   * @param rankMismatches batches whose data-parallel rank differed from the configured one (still applied)
   * @param reconnects connections lost and re-established after at least one batch (each one rebuilds the entries)
   * @param lastSequence the last sequence number applied, or -1
   */
  public record Stats(long batches, long events, long blocks, long skippedEvents, long gaps, long repairedGaps,
      long replayedBatches, long restarts, long rejectedFrames, long resyncs, long rankMismatches, long reconnects,
      long lastSequence) {}

  private final EndpointState endpoint;
  private final CacheIndex index;
  private final String address;
  private final @Nullable String replayAddress;
  private final byte[] topic;
  private final int dataParallelRank;
  private final Duration receiveTimeout;
  private final Duration replayTimeout;
  private final Duration reconnectMin;
  private final Duration reconnectMax;
  private final Listener listener;

  private final KvEventDecoder decoder = new KvEventDecoder();
  private final KvCacheGroups groups;
  private final boolean creditOffloadTier;
  // Driven by the subscriber thread only.
  private final KvEventSequencer sequencer;
  private volatile boolean running;
  private @Nullable Thread thread;
  private final KvEventSockets sockets;

  private final AtomicLong batches = new AtomicLong();
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong blocks = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong gaps = new AtomicLong();
  private final AtomicLong repairedGaps = new AtomicLong();
  private final AtomicLong replayed = new AtomicLong();
  private final AtomicLong restarts = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  private final AtomicLong resyncs = new AtomicLong();
  private final AtomicLong rankMismatches = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private final AtomicLong lastApplied = new AtomicLong(KvEventSequencer.NONE);

  private KvEventSubscriber(Builder b, String address) {
    this.endpoint = b.endpoint;
    this.index = b.index;
    this.address = address;
    this.replayAddress = b.replayAddress == null ? null : VllmLabels.offsetPort(b.replayAddress, b.portOffset);
    this.topic = b.topic.getBytes(StandardCharsets.UTF_8);
    this.dataParallelRank = b.dataParallelRank;
    this.receiveTimeout = b.receiveTimeout;
    this.replayTimeout = b.replayTimeout;
    this.reconnectMin = b.reconnectMin;
    this.reconnectMax = b.reconnectMax;
    this.listener = b.listener;
    this.groups = new KvCacheGroups(endpoint.endpoint().model(), b.reloadTokensPerSecond);
    this.creditOffloadTier = b.creditOffloadTier;
    this.sockets = new KvEventSockets(endpoint.id(), address, replayAddress, topic, receiveTimeout, replayTimeout,
        reconnectMin, reconnectMax, () -> running, b.context);
    this.sequencer = new KvEventSequencer(topic, replayAddress == null ? null : sockets::fetchReplay,
        reconnectMax.toNanos() * 2 + 1_000_000_000L);
  }

  /** A builder for a subscriber applying {@code endpoint}'s events to {@code index}. */
  public static Builder builder(EndpointState endpoint, CacheIndex index) {
    return new Builder(endpoint, index);
  }

  /** The endpoint whose events this subscriber applies. */
  public EndpointState endpoint() {
    return endpoint;
  }

  /** The publisher address subscribed to (after the data-parallel port offset). */
  public String address() {
    return address;
  }

  /** The replay address (after the port offset), or null. */
  public @Nullable String replayAddress() {
    return replayAddress;
  }

  /** Starts the subscriber thread; at most once. */
  public synchronized KvEventSubscriber start() {
    if (thread != null) {
      throw new IllegalStateException("already started");
    }
    running = true;
    if (index instanceof HybridCacheIndex hybrid) {
      hybrid.register(endpoint, groups.hybrid());
    }
    if (creditOffloadTier) {
      endpoint.attachOffloadTier(groups.offloaded());
    }
    Thread t = new Thread(this::run, "kv-events-" + endpoint.id());
    t.setDaemon(true);
    thread = t;
    t.start();
    return this;
  }

  /** Whether the thread is running. */
  public boolean isRunning() {
    return running && isThreadAlive();
  }

  /** Whether the subscriber's thread has started and not yet ended (true between {@link #stop} and its end). */
  boolean isThreadAlive() {
    Thread t;
    synchronized (this) {
      t = thread;
    }
    return t != null && t.isAlive();
  }

  /** Asks the thread to stop without waiting for it. Idempotent. */
  public void stop() {
    running = false;
  }

  /**
   * Stops the thread and waits for it: up to a few receive timeouts plus the replay timeout, since a replay in
   * progress only notices the stop between two replies. Idempotent.
   */
  @Override
  public void close() {
    running = false;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(Math.max(2000, 10 * receiveTimeout.toMillis()) + replayTimeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Blocks this endpoint's server holds in tiers other than the GPU (CPU offload), counted apart: they are never
   * indexed as GPU hits.
   */
  public long otherTierBlocks() {
    return groups.otherTierBlocks();
  }

  /** The endpoint's offload tier under router keys, as its {@code medium: "CPU"} events describe it. */
  public OffloadedPrefixes offloadTier() {
    return groups.offloaded();
  }

  /** The KV-cache group whose events feed the index (the first full-attention group), or -1 before any event. */
  public int indexedGroup() {
    return groups.indexedGroup();
  }

  public Stats stats() {
    return new Stats(batches.get(), events.get(), blocks.get(), skipped.get(), gaps.get(), repairedGaps.get(),
        replayed.get(), restarts.get(), rejected.get(), resyncs.get(), rankMismatches.get(), reconnects.get(),
        lastApplied.get());
  }

  private void run() {
    long backoff = reconnectMin.toMillis();
    try {
      while (running) {
        try (KvEventSockets.Live live = sockets.openLive()) {
          LOG.debug("subscribed to KV events of {} at {}", endpoint.id(), address);
          receiveLoop(live.socket(), live.monitor());
          backoff = reconnectMin.toMillis();
        } catch (RuntimeException e) {
          // Whatever JeroMQ throws, the subscriber backs off and reconnects rather than dying silently.
          if (!running) {
            break;
          }
          LOG.warn("KV-event socket of {} at {} failed ({}); reconnecting in {} ms", endpoint.id(), address,
              e.toString(), backoff);
          sleep(backoff);
          backoff = Math.min(reconnectMax.toMillis(), backoff * 2);
        }
      }
    } finally {
      if (index instanceof HybridCacheIndex hybrid) {
        hybrid.unregister(endpoint, groups.hybrid());
      }
      if (endpoint.offloadTier() == groups.offloaded()) {
        endpoint.attachOffloadTier(null);
      }
      sockets.close();
    }
  }

  /**
   * Receives until stopped, or until the sequencer finds the socket deaf: then the caller builds a fresh one. JeroMQ
   * occasionally keeps a connection that never delivers again, without reporting it (seen against a publisher
   * restarted on the same port), so a long silence is checked rather than trusted ({@link KvEventSequencer#onSilence}).
   */
  private void receiveLoop(ZMQ.Socket socket, ZMQ.Socket monitor) {
    List<byte[]> frames = new ArrayList<>(4);
    sequencer.socketOpened(System.nanoTime());
    while (running) {
      byte[] first = socket.recv(0);
      for (ZEvent e = ZEvent.recv(monitor, ZMQ.DONTWAIT); e != null; e = ZEvent.recv(monitor, ZMQ.DONTWAIT)) {
        if (e.getEvent() == ZMonitor.Event.DISCONNECTED) {
          sequencer.onDisconnected();
        }
      }
      if (first == null) {
        boolean replace;
        try {
          replace = execute(sequencer.onSilence(System.nanoTime(), endpoint.health()));
        } catch (RuntimeException e) {
          LOG.error("checking the KV events of {} after a silence failed; clearing its entries", endpoint.id(), e);
          resync();
          replace = true;
        }
        if (replace) {
          LOG.debug("KV-event socket of {} at {} looks deaf; connecting a new one", endpoint.id(), address);
          return;
        }
        continue;
      }
      frames.clear();
      frames.add(first);
      while (socket.hasReceiveMore()) {
        frames.add(socket.recv(0));
      }
      try {
        execute(sequencer.onMessage(frames, System.nanoTime()));
      } catch (RuntimeException e) {
        // A bug in an index or listener must not kill the subscriber: resynchronise and carry on.
        LOG.error("applying KV events of {} failed; clearing its entries", endpoint.id(), e);
        resync();
      }
    }
  }

  /** Carries out the sequencer's actions in order; returns whether the live socket is to be replaced. */
  private boolean execute(List<KvEventSequencer.Action> actions) {
    boolean replace = false;
    for (KvEventSequencer.Action action : actions) {
      switch (action) {
        case KvEventSequencer.Action.Apply a -> apply(a.seq(), a.payload(), a.replayed());
        case KvEventSequencer.Action.Clear c -> {
          LOG.info("clearing the KV-cache entries of {}: {}", endpoint.id(), c.why());
          resync();
        }
        case KvEventSequencer.Action.Gap g -> {
          gaps.incrementAndGet();
          if (g.repaired()) {
            repairedGaps.incrementAndGet();
          }
          notifyListener(() -> listener.onGap(endpoint, g.expected(), g.received(), g.repaired()));
        }
        case KvEventSequencer.Action.Restart r -> {
          restarts.incrementAndGet();
          LOG.info("KV-event server of {} restarted (sequence {} after {})", endpoint.id(),
              Long.toUnsignedString(r.received()), Long.toUnsignedString(r.last()));
          notifyListener(() -> listener.onRestart(endpoint, r.last(), r.received()));
        }
        case KvEventSequencer.Action.Reconnected r -> reconnects.incrementAndGet();
        case KvEventSequencer.Action.Reject r -> reject(r.reason());
        case KvEventSequencer.Action.ReplaceSocket r -> replace = true;
      }
    }
    return replace;
  }

  private void apply(long seq, byte[] payload, boolean fromReplay) {
    KvEventBatch batch;
    try {
      batch = decoder.decode(payload);
    } catch (KvEventFormatException e) {
      reject("batch " + Long.toUnsignedString(seq) + " does not decode: " + e.getMessage());
      // Its events are lost: what the index holds for this endpoint can no longer be trusted.
      resync();
      lastApplied.set(seq);
      return;
    }
    if (dataParallelRank >= 0 && batch.dataParallelRank() >= 0 && batch.dataParallelRank() != dataParallelRank) {
      if (rankMismatches.incrementAndGet() == 1) {
        LOG.warn("KV events at {} come from data-parallel rank {}, but endpoint {} is rank {}", address,
            batch.dataParallelRank(), endpoint.id(), dataParallelRank);
      }
    }
    int keptApart = groups.apply(batch, index, endpoint, () -> {
      LOG.info("KV events of {} name a full-attention group: indexing it instead of the group before",
          endpoint.id());
      resyncs.incrementAndGet();
      index.onEvent(endpoint, new KvEvent.AllBlocksCleared());
    });
    batches.incrementAndGet();
    events.addAndGet(batch.events().size() - keptApart);
    skipped.addAndGet(keptApart);
    blocks.addAndGet(batch.blockCount());
    skipped.addAndGet(batch.skippedEvents());
    if (fromReplay) {
      replayed.incrementAndGet();
    }
    lastApplied.set(seq);
    notifyListener(() -> listener.onBatch(endpoint, seq, batch, fromReplay));
  }

  private void resync() {
    resyncs.incrementAndGet();
    groups.clear();
    index.onEvent(endpoint, new KvEvent.AllBlocksCleared());
  }

  private void reject(String reason) {
    long n = rejected.incrementAndGet();
    if (n <= 10 || Long.bitCount(n) == 1) {
      LOG.warn("rejected a KV-event frame from {} ({} so far): {}", endpoint.id(), n, reason);
    }
    notifyListener(() -> listener.onRejected(endpoint, reason));
  }

  private void notifyListener(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.warn("KV-event listener failed", e);
    }
  }

  private void sleep(long millis) {
    long end = System.nanoTime() + millis * 1_000_000;
    while (running && System.nanoTime() < end) {
      try {
        Thread.sleep(Math.min(50, millis));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running = false;
      }
    }
  }

  /** Builds a {@link KvEventSubscriber}; not thread-safe. */
  public static final class Builder {
    private final EndpointState endpoint;
    private final CacheIndex index;
    private @Nullable String address;
    private @Nullable String replayAddress;
    private String topic = "";
    private int portOffset;
    private int dataParallelRank = -1;
    private Duration receiveTimeout = Duration.ofMillis(100);
    private Duration replayTimeout = Duration.ofSeconds(5);
    private Duration reconnectMin = Duration.ofMillis(100);
    private Duration reconnectMax = Duration.ofSeconds(5);
    private Listener listener = new Listener() {};
    private @Nullable ZContext context;
    private boolean creditOffloadTier = true;
    private double reloadTokensPerSecond = OffloadedPrefixes.DEFAULT_RELOAD_TOKENS_PER_SECOND;

    private Builder(EndpointState endpoint, CacheIndex index) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
      this.index = Objects.requireNonNull(index, "index");
    }

    /** The publisher's address, such as {@code tcp://10.0.0.7:5557} (required). */
    public Builder address(String address) {
      this.address = requireZmqAddress(address);
      return this;
    }

    /** The replay ROUTER socket's address, or null for none (the default). */
    public Builder replayAddress(@Nullable String replayAddress) {
      this.replayAddress = replayAddress == null ? null : requireZmqAddress(replayAddress);
      return this;
    }

    /** The topic prefix to subscribe to; default empty (every message). */
    public Builder topic(String topic) {
      this.topic = Objects.requireNonNull(topic, "topic");
      return this;
    }

    /**
     * Subscribes to data-parallel rank {@code rank}: both addresses' ports move up by the rank, as vLLM's
     * publishers do, and batches are expected to carry this rank.
     */
    public Builder dataParallelRank(int rank) {
      if (rank < 0) {
        throw new IllegalArgumentException("rank must not be negative: " + rank);
      }
      this.dataParallelRank = rank;
      this.portOffset = rank;
      return this;
    }

    /** How long one receive waits before checking for shutdown; default 100 ms. */
    public Builder receiveTimeout(Duration timeout) {
      this.receiveTimeout = positive(timeout, "receiveTimeout");
      return this;
    }

    /** How long to wait for each replay reply before giving up and resynchronising; default 5 s. */
    public Builder replayTimeout(Duration timeout) {
      this.replayTimeout = positive(timeout, "replayTimeout");
      return this;
    }

    /** Reconnection backoff: first delay and cap (doubling in between); default 100 ms and 5 s. */
    public Builder reconnect(Duration min, Duration max) {
      positive(min, "min");
      positive(max, "max");
      if (max.compareTo(min) < 0) {
        throw new IllegalArgumentException("max " + max + " is below min " + min);
      }
      this.reconnectMin = min;
      this.reconnectMax = max;
      return this;
    }

    public Builder listener(Listener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Whether routing credits the server's offload tier (blocks its events place in CPU memory) at their reload
     * cost; default true. The subscriber attaches the tier to the endpoint ({@link EndpointState#offloadTier}).
     */
    public Builder creditOffloadTier(boolean credit) {
      this.creditOffloadTier = credit;
      return this;
    }

    /**
     * How fast the server loads offloaded KV back to the GPU, in prompt tokens a second; default
     * {@link OffloadedPrefixes#DEFAULT_RELOAD_TOKENS_PER_SECOND}. About the host link's bytes a second over the KV
     * bytes a token per GPU.
     */
    public Builder offloadReloadTokensPerSecond(double tokensPerSecond) {
      if (!(tokensPerSecond > 0) || Double.isInfinite(tokensPerSecond)) {
        throw new IllegalArgumentException("offloadReloadTokensPerSecond must be positive: " + tokensPerSecond);
      }
      this.reloadTokensPerSecond = tokensPerSecond;
      return this;
    }

    /** A ZeroMQ context to share with other subscribers; by default each subscriber has its own. */
    Builder context(@Nullable ZContext context) {
      this.context = context;
      return this;
    }

    public KvEventSubscriber build() {
      if (address == null) {
        throw new IllegalStateException("address is required");
      }
      return new KvEventSubscriber(this, VllmLabels.offsetPort(address, portOffset));
    }

    private static String requireZmqAddress(String address) {
      Objects.requireNonNull(address, "address");
      if (!address.matches("(tcp|ipc|inproc)://.+")) {
        throw new IllegalArgumentException("not a ZeroMQ address (tcp://host:port): " + address);
      }
      return address;
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
