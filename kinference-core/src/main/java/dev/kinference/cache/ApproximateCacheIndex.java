package dev.kinference.cache;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.request.PromptRetention;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A cache index that predicts what each server holds from where the router sent requests, for fleets that publish
 * no KV events. Each endpoint remembers the blocks of the prompts routed to it, at most its KV capacity
 * ({@code num_gpu_blocks} from its metrics, else {@link Builder#defaultCapacityBlocks}), evicting the least
 * recently used first, and forgets blocks unused for longer than the time-to-live.
 *
 * <p>A prompt's blocks are touched last-to-first, so its prefix is the most recent and its tail is evicted first,
 * as vLLM's free-block queue does. A block's ancestors are therefore always more recent than it, are evicted and
 * expire after it, and each endpoint's blocks stay prefix-closed: lookups bisect. (While a prompt is being recorded,
 * a concurrent lookup may see its tail before its head, as it may see any other half-recorded state.)
 *
 * <p>A client's prompt-caching hint ({@link PromptRetention}: Anthropic's {@code cache_control} with {@code ttl: 1h},
 * OpenAI's {@code prompt_cache_retention: 24h}) keeps the prefix it covers for that long instead of the
 * time-to-live; the retained blocks are a prefix of the prompt, so the blocks stay prefix-closed.
 *
 * <p>Thread-safety: see {@link CacheIndex}. Each endpoint's LRU set has its own lock; routing to different
 * endpoints never contends, and lookups only try-lock for expiry.
 */
public final class ApproximateCacheIndex extends BlockIndexBase {

  /** The capacity llm-d assumes when a server's is unknown: 31,250 blocks. */
  public static final int DEFAULT_CAPACITY_BLOCKS = 31_250;

  private static final int TICK_SHIFT = 20;
  /** Well inside the ticks' wrap (about 26 days), so any two live use times compare correctly. */
  private static final Duration MAX_TTL = Duration.ofDays(7);

  private final int defaultCapacityBlocks;
  private final long ttlNanos;
  private final long sweepIntervalNanos;
  private final LongSupplier ticker;
  private final SlotMap<EndpointBlocks> bySlot = new SlotMap<>();

  private final class EndpointBlocks implements LruKeySet.Eviction {
    final EndpointState endpoint;
    final ReentrantLock lock = new ReentrantLock();
    final LruKeySet keys;
    volatile long lastSweep;
    /** When the last block a client asked to retain expires (nanos); the all-expired shortcut waits for it. */
    long retainedUntil;
    boolean removed;
    @SuppressWarnings("UnusedVariable") // written, never read: its only job is to keep LruKeySet.warm's reads
    long warmed;

    EndpointBlocks(EndpointState endpoint, long now) {
      this.endpoint = endpoint;
      this.keys = new LruKeySet(capacityOf(endpoint));
      this.lastSweep = now;
      this.retainedUntil = now;
    }

    @Override
    public void evicted(long key) {
      table.remove(key, endpoint.slot());
    }
  }

  private ApproximateCacheIndex(Builder b) {
    this.defaultCapacityBlocks = b.defaultCapacityBlocks;
    this.ttlNanos = b.ttl.toNanos();
    this.sweepIntervalNanos = Math.min(ttlNanos / 4, Duration.ofSeconds(1).toNanos());
    this.ticker = b.ticker;
  }

  /** An index with the defaults: 31,250 blocks per endpoint when unknown, 120 s time-to-live. */
  public ApproximateCacheIndex() {
    this(builder());
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String name() {
    return "approximate";
  }

  @Override
  public boolean isPrecise() {
    return false;
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    bySlot.put(endpoint.slot(), new EndpointBlocks(endpoint, ticker.getAsLong()));
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    EndpointBlocks blocks = bySlot.remove(endpoint.slot());
    if (blocks != null) {
      blocks.lock.lock();
      try {
        blocks.removed = true;
        blocks.keys.clear(blocks);
      } finally {
        blocks.lock.unlock();
      }
    }
  }

  @Override
  public void onRouted(EndpointState endpoint, PrefixKeys prefix) {
    record(endpoint, prefix, 0, 0);
  }

  /**
   * As {@link #onRouted(EndpointState, PrefixKeys)}; when the retention outlasts this index's time-to-live, the
   * blocks it covers are remembered until it ends instead, unless the endpoint's capacity evicts them first.
   */
  @Override
  public void onRouted(EndpointState endpoint, PrefixKeys prefix, @Nullable PromptRetention retention) {
    if (retention == null) {
      onRouted(endpoint, prefix);
      return;
    }
    long extra = retention.ttl().toNanos() - ttlNanos;
    record(endpoint, prefix, extra > 0 ? retention.coveredBlocks(prefix.size()) : 0, Math.max(0, extra));
  }

  /** Touches the prompt's blocks last to first; its first {@code retained} blocks are used {@code extra} ns late. */
  private void record(EndpointState endpoint, PrefixKeys prefix, int retained, long extraNanos) {
    EndpointBlocks blocks = blocksOf(endpoint);
    if (blocks == null) {
      return;
    }
    long now = ticker.getAsLong();
    int slot = endpoint.slot();
    blocks.lock.lock();
    try {
      if (blocks.removed) {
        return;
      }
      int capacity = capacityOf(endpoint);
      if (capacity != blocks.keys.capacity()) {
        blocks.keys.capacity(capacity, blocks);
      }
      expire(blocks, now);
      int n = Math.min(prefix.size(), capacity);
      blocks.warmed ^= blocks.keys.warm(prefix, n);
      int used = ticks(now);
      int usedRetained = ticks(now + extraNanos);
      if (retained > 0 && now + extraNanos - blocks.retainedUntil > 0) {
        blocks.retainedUntil = now + extraNanos + ttlNanos;
      }
      for (int i = n - 1; i >= 0; i--) {
        long key = prefix.key(i);
        if (blocks.keys.touch(key, i < retained ? usedRetained : used, blocks)) {
          table.add(key, slot);
        }
      }
    } finally {
      blocks.lock.unlock();
    }
  }

  @Override
  public void onEvent(EndpointState endpoint, KvEvent event) {
    if (event instanceof KvEvent.AllBlocksCleared) {
      EndpointBlocks blocks = blocksOf(endpoint);
      if (blocks != null) {
        blocks.lock.lock();
        try {
          blocks.keys.clear(blocks);
        } finally {
          blocks.lock.unlock();
        }
      }
    }
  }

  @Override
  boolean prefixClosed(EndpointState endpoint) {
    return true;
  }

  @Override
  void beforeLookup(EndpointState[] candidates, int count) {
    long now = ticker.getAsLong();
    for (int i = 0; i < count; i++) {
      EndpointBlocks blocks = bySlot.get(candidates[i].slot());
      if (blocks != null && now - blocks.lastSweep > sweepIntervalNanos && blocks.lock.tryLock()) {
        try {
          expire(blocks, now);
        } finally {
          blocks.lock.unlock();
        }
      }
    }
  }

  /** Forgets the blocks of {@code blocks} unused for the time-to-live; its lock is held. */
  private void expire(EndpointBlocks blocks, long now) {
    if (now - blocks.lastSweep > ttlNanos && now - blocks.retainedUntil > 0) {
      // Every block was last used at or before the last sweep (each use is one), so all have expired; and clearing
      // here keeps the 32-bit ticks of blocks that old from being compared across a wrap.
      blocks.keys.clear(blocks);
    } else {
      blocks.keys.expireBefore(ticks(now - ttlNanos), ticks(now), blocks);
    }
    blocks.lastSweep = now;
  }

  /** Nanoseconds as the LRU sets' 32-bit ticks of 2^20 ns (about 1 ms), which wrap after about 26 days. */
  private static int ticks(long nanos) {
    return (int) (nanos >> TICK_SHIFT);
  }

  /** Blocks remembered for {@code endpoint}. */
  public int blockCount(EndpointState endpoint) {
    EndpointBlocks blocks = blocksOf(endpoint);
    if (blocks == null) {
      return 0;
    }
    blocks.lock.lock();
    try {
      return blocks.keys.size();
    } finally {
      blocks.lock.unlock();
    }
  }

  @Override
  public long entryCount() {
    long n = 0;
    for (EndpointBlocks b : bySlot.values()) {
      b.lock.lock();
      try {
        n += b.keys.size();
      } finally {
        b.lock.unlock();
      }
    }
    return n;
  }

  /** The time-to-live of an unused block. */
  public Duration ttl() {
    return Duration.ofNanos(ttlNanos);
  }

  private @Nullable EndpointBlocks blocksOf(EndpointState endpoint) {
    EndpointBlocks blocks = bySlot.get(endpoint.slot());
    return blocks != null && blocks.endpoint == endpoint ? blocks : null;
  }

  private int capacityOf(EndpointState endpoint) {
    EndpointMetrics m = endpoint.metrics();
    if (m != null && m.numGpuBlocks() > 0) {
      return (int) Math.min(Integer.MAX_VALUE - 8, m.numGpuBlocks());
    }
    return defaultCapacityBlocks;
  }

  /** Configures an {@link ApproximateCacheIndex}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private int defaultCapacityBlocks = DEFAULT_CAPACITY_BLOCKS;
    private Duration ttl = Duration.ofMinutes(2);
    private LongSupplier ticker = System::nanoTime;

    private Builder() {}

    /** Blocks remembered per endpoint whose metrics do not say {@code num_gpu_blocks}. Default 31,250. */
    public Builder defaultCapacityBlocks(int blocks) {
      if (blocks < 1) {
        throw new IllegalArgumentException("defaultCapacityBlocks must be positive: " + blocks);
      }
      this.defaultCapacityBlocks = blocks;
      return this;
    }

    /** How long an unused block is remembered: positive, at most 7 days. Default 120 s (Dynamo's). */
    public Builder ttl(Duration ttl) {
      Objects.requireNonNull(ttl, "ttl");
      if (ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("ttl must be positive: " + ttl);
      }
      if (ttl.compareTo(MAX_TTL) > 0) {
        throw new IllegalArgumentException("ttl must be at most " + MAX_TTL.toDays() + " days: " + ttl);
      }
      this.ttl = ttl;
      return this;
    }

    /** The nanosecond clock; tests and the simulator pass a virtual one. */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    public ApproximateCacheIndex build() {
      return new ApproximateCacheIndex(this);
    }
  }
}
