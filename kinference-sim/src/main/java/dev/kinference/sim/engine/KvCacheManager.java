package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The engine's KV-cache bookkeeping, vLLM's {@code kv_cache_manager.py}: the GPU {@link BlockPool} and its prefix
 * cache (lookups, {@code allocate_slots}, {@code cache_full_blocks}, freeing), and the optional
 * {@link CpuOffloadTier}. The scheduler ({@link SimEngine}) decides what runs; this class decides which blocks it
 * takes and records the KV events that follow, in order, until {@link #drainEvents}.
 *
 * <p>A model with a sliding-window KV-cache group ({@link ModelSpec#kvCacheGroups} 2) is managed as vLLM's
 * {@code HybridKVCacheCoordinator} with a {@code FullAttentionManager} (group 0) and a {@code SlidingWindowManager}
 * (group 1) over one shared pool: each group takes its own blocks; before each allocation the window group frees the
 * blocks wholly before the window ({@code remove_skipped_blocks}: the first
 * {@code (numComputed - window + 1) / blockSize}, which stay cached until evicted); a prefix hit reaches only as far
 * as both groups can reuse it (the full-attention hit, cut to the end of the last run of
 * {@code ceil((window - 1) / blockSize)} blocks the window group holds within it, or to the run the window group
 * holds from the start if it holds no such run); and each group's blocks are published as events of that group.
 *
 * <p>A model with linear-attention layers ({@link ModelSpec#mambaGroups} above 0, the default Qwen3.5-shaped model)
 * is managed as vLLM's coordinator with Mamba groups in {@code mamba_cache_mode} {@code align}, the mode vLLM selects
 * for Qwen3.5 when prefix caching is enabled: groups 0 to {@code mambaGroups - 1} are Mamba groups and the last one
 * is full attention ({@link ModelSpec#fullAttentionGroup}); the block size is raised so a block holds one state
 * ({@link ModelSpec#mambaBlockSize}). Each Mamba group holds a running-state block per sequence, a new one each time
 * the sequence enters a new block; a step that ends on a block boundary (the scheduler cuts prefill chunks there, see
 * {@link #alignedChunk}) leaves that block holding the state at the boundary, cached under the block's hash, and the
 * sequence keeps it as its checkpoint until the next one (vLLM frees it two steps later; freed blocks stay cached
 * until evicted). A prefix hit is the full-attention hit cut to the last block whose state every Mamba group holds
 * ({@code MambaManager.find_longest_cache_hit}); a state cached in the current step is not reused in that step
 * ({@code cached_blocks_this_step}). A Mamba group's {@code BlockStored} covers the same blocks and tokens as the
 * full-attention group's but lists only the block holding a state, as vLLM's {@code cache_full_blocks} skips null
 * blocks.
 *
 * <p>Not thread-safe; owned by one engine.
 */
final class KvCacheManager {

  private final EngineConfig config;
  private final EngineHasher hasher;
  private final int blockSize;
  private final KvEventLog events = new KvEventLog();
  private final int window;
  private final int windowBlocks;
  private final int mambaGroups;
  private final int full;
  private final java.util.Set<Long> statesCachedThisStep = new java.util.HashSet<>();
  private BlockPool pool;
  private final @Nullable CpuOffloadTier offload;

  KvCacheManager(EngineConfig config) {
    this.config = config;
    this.hasher = new EngineHasher(config.hashSeed());
    this.blockSize = config.blockSize();
    this.window = config.model().slidingWindow();
    this.windowBlocks = window == 0 ? 0 : Math.max(1, ceilDiv(window - 1, blockSize));
    this.mambaGroups = config.model().mambaGroups();
    this.full = config.model().fullAttentionGroup();
    this.pool = new BlockPool(config.numGpuBlocks(), config.model().kvCacheGroups(), events);
    this.offload = config.cpuOffloadBytes() > 0 ? new CpuOffloadTier(config.cpuOffloadBytes(), config) : null;
  }

  BlockPool pool() {
    return pool;
  }

  @Nullable CpuOffloadTier offload() {
    return offload;
  }

  EngineHasher hasher() {
    return hasher;
  }

  /** Whether events are waiting for {@link #drainEvents}. */
  boolean hasEvents() {
    return !events.isEmpty();
  }

  /** The KV-cache group of each event {@link #drainEvents} will return, in order. */
  List<Integer> eventGroups() {
    return events.groups();
  }

  /** The events recorded since the last call, in order. */
  List<KvEvent> drainEvents() {
    List<KvEvent> out = List.copyOf(events.events);
    events.clear();
    return out;
  }

  /** A restarted server: an empty pool and tier, no events. */
  void restart() {
    events.clear();
    pool = new BlockPool(config.numGpuBlocks(), config.model().kvCacheGroups(), events);
    if (offload != null) {
      offload.clear();
    }
  }

  /** vLLM's {@code reset_prefix_cache} on the GPU pool; false while blocks are in use. */
  boolean resetPrefixCache() {
    return pool.resetPrefixCache();
  }

  /**
   * The leading blocks of {@code s} the GPU prefix cache holds (at most {@code (numTokens - 1) / blockSize}),
   * written to {@code hits} (grown if needed; the array is returned).
   */
  int[] lookup(Sequence s, int[] hits, int[] count) {
    int hitBlocks = 0;
    if (config.enablePrefixCaching()) {
      int maxBlocks = (s.numTokens - 1) / blockSize;
      if (hits.length < maxBlocks) {
        hits = new int[Math.max(maxBlocks, hits.length * 2)];
      }
      while (hitBlocks < maxBlocks) {
        int block = pool.lookup(s.blockHash(hitBlocks, hasher, blockSize), full);
        if (block < 0) {
          break;
        }
        hits[hitBlocks++] = block;
      }
      if (window > 0 && hitBlocks > 0) {
        hitBlocks = windowHit(s.blockHashes, hitBlocks);
      }
      if (mambaGroups > 0 && hitBlocks > 0) {
        hitBlocks = mambaHit(s.blockHashes, hitBlocks);
      }
    }
    count[0] = hitBlocks;
    return hits;
  }

  /**
   * vLLM's {@code SlidingWindowManager.find_longest_cache_hit} over the first {@code hit} blocks: the end of the
   * last run of {@link #windowBlocks} blocks the window group holds, else the run it holds from block 0. A full
   * attention hit cut there stays a hit, so this is the hybrid coordinator's fixed point.
   */
  private int windowHit(long[] hashes, int hit) {
    int run = 0;
    for (int i = hit - 1; i >= 0; i--) {
      if (pool.lookup(hashes[i], 1) >= 0) {
        if (++run >= windowBlocks) {
          return i + windowBlocks;
        }
      } else {
        run = 0;
      }
    }
    return run;
  }

  /**
   * vLLM's {@code MambaManager.find_longest_cache_hit} over the first {@code hit} blocks: the last of them whose
   * state every Mamba group holds ends the hit (0 if none).
   */
  private int mambaHit(long[] hashes, int hit) {
    for (int i = hit; i > 0; i--) {
      if (holdsState(hashes[i - 1])) {
        return i;
      }
    }
    return 0;
  }

  private boolean holdsState(long hash) {
    for (int g = 0; g < mambaGroups; g++) {
      if (pool.lookup(hash, g) < 0) {
        return false;
      }
    }
    return true;
  }

  /** A new engine step starts: states cached by the last one may be reused. */
  void newStep() {
    statesCachedThisStep.clear();
  }

  /**
   * vLLM's {@code _mamba_block_aligned_split} for a Mamba model in align mode: a prefill chunk of {@code newTokens}
   * from {@code computed} ends on a block boundary, and the chunk that would pass the prompt's last block boundary
   * ends there, so the state at that boundary is cached; the prompt's last partial block follows on its own. May be 0
   * (the chunk does not reach a boundary within the budget). Other models and decodes: {@code newTokens}.
   */
  int alignedChunk(Sequence s, int computed, int newTokens) {
    if (mambaGroups == 0 || s.numOutput > 0 || !config.enablePrefixCaching()) {
      return newTokens;
    }
    int lastCachePosition = s.promptLength - s.promptLength % blockSize;
    int end = computed + newTokens;
    if (end < lastCachePosition) {
      return newTokens / blockSize * blockSize;
    }
    if (computed < lastCachePosition && lastCachePosition < end) {
      return lastCachePosition - computed;
    }
    return newTokens;
  }

  /**
   * vLLM's {@code remove_skipped_blocks}: the window group frees the blocks wholly before the window of a sequence
   * with {@code numComputed} tokens computed, last first, leaving the null block (0) in their place.
   */
  private void removeSkippedBlocks(Sequence s) {
    int skipped = Math.min(s.numWindowBlocks, Math.max(0, s.numComputed - window + 1) / blockSize);
    for (int i = skipped - 1; i >= 0 && s.windowBlocks[i] != 0; i--) {
      pool.free(s.windowBlocks[i]);
      s.windowBlocks[i] = 0;
    }
  }

  /** The window group's block holding block {@code b} of {@code s}, which a hit found there. */
  private int windowHitBlock(Sequence s, int b) {
    int block = pool.lookup(s.blockHash(b, hasher, blockSize), 1);
    if (block < 0) {
      throw new IllegalStateException("window group lost hit block " + b + " of " + s.id());
    }
    return block;
  }

  /** The blocks after a GPU hit of {@code gpuHit} blocks that the offload tier holds in a row (0 without one). */
  int offloadedAfter(Sequence s, int gpuHit) {
    if (offload == null || !config.enablePrefixCaching()) {
      return 0;
    }
    return offload.lookup(s, hasher, gpuHit, (s.numTokens - 1) / blockSize);
  }

  /** Nanoseconds to load {@code tokens} tokens from the offload tier. */
  long loadNanos(int tokens) {
    return Objects.requireNonNull(offload).loadNanos(tokens);
  }

  /**
   * vLLM's {@code allocate_slots}: room for {@code newTokens} more tokens after the hit blocks, or false (nothing
   * changes) if the free queue cannot supply the blocks, counting hit blocks that must leave the free queue. With
   * {@code cache} false the new full blocks are not cached yet (their KV is still loading).
   */
  boolean allocateSlots(Sequence s, int newTokens, int @Nullable [] hits, int hitCount, boolean cache) {
    if (window > 0) {
      removeSkippedBlocks(s);
    }
    int computedAfterHits = s.numComputed + hitCount * blockSize;
    int needed = ceilDiv(computedAfterHits + newTokens, blockSize);
    int toAllocate = Math.max(0, needed - s.numBlocks - hitCount);
    int windowToAllocate = window > 0 ? Math.max(0, needed - s.numWindowBlocks - hitCount) : 0;
    int firstWindowHit = Math.max(0, hitCount - windowBlocks);
    int[] stateHits = mambaGroups > 0 && hitCount > 0 ? stateHitBlocks(s, hitCount - 1) : new int[0];
    if (stateHits.length > 0 && statesCachedThisStep.contains(s.blockHash(hitCount - 1, hasher, blockSize))) {
      return false; // vLLM: a state cached in this step is computed by its end, so the hit waits for the next step
    }
    int stateIndex = ceilDiv(computedAfterHits + newTokens, blockSize) - 1;
    boolean newState = mambaGroups > 0 && stateIndex > s.stateIndex;
    int hitsFromFreeQueue = 0;
    for (int b : stateHits) {
      if (pool.refCount(b) == 0) {
        hitsFromFreeQueue++;
      }
    }
    for (int i = 0; i < hitCount; i++) {
      if (pool.refCount(Objects.requireNonNull(hits)[i]) == 0) {
        hitsFromFreeQueue++;
      }
      if (window > 0 && i >= firstWindowHit && pool.refCount(windowHitBlock(s, i)) == 0) {
        hitsFromFreeQueue++;
      }
    }
    int stateNeeded = mambaGroups > 0 ? (newState ? mambaGroups : 0)
        : s.stateBlocks.length == 0 ? config.stateBlocksPerSequence() : 0;
    if (toAllocate + windowToAllocate + hitsFromFreeQueue + stateNeeded > pool.freeCount()) {
      return false;
    }
    for (int i = 0; i < hitCount; i++) {
      int block = Objects.requireNonNull(hits)[i];
      pool.touch(block);
      s.addBlock(block);
    }
    if (window > 0) {
      for (int i = 0; i < hitCount; i++) {
        if (i < firstWindowHit) {
          s.addWindowBlock(0);
        } else {
          int block = windowHitBlock(s, i);
          pool.touch(block);
          s.addWindowBlock(block);
        }
      }
      for (int i = 0; i < windowToAllocate; i++) {
        s.addWindowBlock(pool.allocate());
      }
    }
    if (hitCount > 0) {
      s.numCachedBlocks = hitCount;
    }
    if (stateHits.length > 0) {
      for (int b : stateHits) {
        pool.touch(b);
      }
      s.checkpointBlocks = stateHits;
    }
    if (mambaGroups > 0 && newState) {
      advanceState(s, stateIndex);
    } else if (stateNeeded > 0) {
      s.stateBlocks = new int[stateNeeded];
      for (int i = 0; i < stateNeeded; i++) {
        s.stateBlocks[i] = pool.allocate();
      }
    }
    for (int i = 0; i < toAllocate; i++) {
      s.addBlock(pool.allocate());
    }
    if (cache) {
      cacheFullBlocks(s, Math.min(computedAfterHits + newTokens, s.numTokens));
    }
    return true;
  }

  /** Each Mamba group's block holding the state at the end of block {@code b} of {@code s}, which a hit found. */
  private int[] stateHitBlocks(Sequence s, int b) {
    long hash = s.blockHash(b, hasher, blockSize);
    int[] out = new int[mambaGroups];
    for (int g = 0; g < mambaGroups; g++) {
      out[g] = pool.lookup(hash, g);
      if (out[g] < 0) {
        throw new IllegalStateException("Mamba group " + g + " lost hit block " + b + " of " + s.id());
      }
    }
    return out;
  }

  /**
   * The sequence enters block {@code stateIndex}: new running-state blocks; the old ones become the checkpoint if they
   * hold a cached state at a boundary (the checkpoint before is released), else they are released.
   */
  private void advanceState(Sequence s, int stateIndex) {
    int[] old = s.stateBlocks;
    if (old.length > 0 && pool.hashOf(old[0]) != 0) {
      for (int b : s.checkpointBlocks) {
        pool.free(b);
      }
      s.checkpointBlocks = old;
    } else {
      for (int b : old) {
        pool.free(b);
      }
    }
    int[] running = new int[mambaGroups];
    for (int g = 0; g < mambaGroups; g++) {
      running[g] = pool.allocate();
    }
    s.stateBlocks = running;
    s.stateIndex = stateIndex;
  }

  /**
   * vLLM's {@code cache_full_blocks}: hashes the newly full blocks and records one {@code BlockStored}; the offload
   * tier stores them too.
   */
  void cacheFullBlocks(Sequence s, int tokensToCache) {
    if (!config.enablePrefixCaching()) {
      return;
    }
    int full = tokensToCache / blockSize;
    int first = s.numCachedBlocks;
    if (full <= first) {
      return;
    }
    long[] hashes = new long[full - first];
    for (int b = first; b < full; b++) {
      long h = s.blockHash(b, hasher, blockSize);
      pool.cache(s.blocks[b], h, this.full);
      hashes[b - first] = h;
    }
    Long parent = first == 0 ? null : s.blockHash(first - 1, hasher, blockSize);
    int[] tokens = Arrays.copyOfRange(s.tokens, first * blockSize, full * blockSize);
    if (mambaGroups > 0) {
      cacheState(s, full, parent, tokens, first == 0 ? s.request.cacheSalt() : null);
    }
    events.add(new KvEvent.BlockStored(hashes, parent, tokens, blockSize, s.request.lora(),
        KvEvent.Medium.GPU, first == 0 ? s.request.cacheSalt() : null), this.full);
    if (window > 0) {
      cacheWindowBlocks(s, first, full);
    }
    s.numCachedBlocks = full;
    if (offload != null) {
      offload.store(s, hasher, first, hashes, events.events);
    }
  }

  /**
   * The Mamba groups' share of {@link #cacheFullBlocks} (published first: they come first in vLLM's group order): the
   * running-state blocks, when they stand for the last newly full block, are cached under its hash; the other
   * blocks of the span are null in a Mamba group and not listed. Nothing is published for a span without a state
   * (vLLM would send an empty {@code block_hashes}).
   */
  private void cacheState(Sequence s, int full, @Nullable Long parent, int[] tokens, @Nullable String salt) {
    if (s.stateIndex != full - 1 || s.stateBlocks.length == 0 || pool.hashOf(s.stateBlocks[0]) != 0) {
      return;
    }
    long h = s.blockHash(full - 1, hasher, blockSize);
    for (int g = 0; g < mambaGroups; g++) {
      pool.cache(s.stateBlocks[g], h, g);
      events.add(new KvEvent.BlockStored(new long[] {h}, parent, tokens, blockSize, s.request.lora(),
          KvEvent.Medium.GPU, salt), g);
    }
    statesCachedThisStep.add(h);
  }

  /** The window group's share of {@link #cacheFullBlocks}: blocks it freed already (null) are not cached. */
  private void cacheWindowBlocks(Sequence s, int first, int full) {
    int from = first;
    while (from < full && s.windowBlocks[from] == 0) {
      from++;
    }
    if (from == full) {
      return;
    }
    long[] hashes = new long[full - from];
    for (int b = from; b < full; b++) {
      long h = s.blockHash(b, hasher, blockSize);
      pool.cache(s.windowBlocks[b], h, 1);
      hashes[b - from] = h;
    }
    Long parent = from == 0 ? null : s.blockHash(from - 1, hasher, blockSize);
    int[] tokens = Arrays.copyOfRange(s.tokens, from * blockSize, full * blockSize);
    events.add(new KvEvent.BlockStored(hashes, parent, tokens, blockSize, s.request.lora(),
        KvEvent.Medium.GPU, from == 0 ? s.request.cacheSalt() : null), 1);
  }

  /** Frees the request's state blocks, then its KV blocks tail first (so the tail is evicted first). */
  void freeBlocks(Sequence s) {
    for (int b : s.stateBlocks) {
      pool.free(b);
    }
    s.stateBlocks = new int[0];
    for (int b : s.checkpointBlocks) {
      pool.free(b);
    }
    s.checkpointBlocks = new int[0];
    s.stateIndex = -1;
    for (int i = s.numBlocks - 1; i >= 0; i--) {
      pool.free(s.blocks[i]);
    }
    for (int i = s.numWindowBlocks - 1; i >= 0; i--) {
      if (s.windowBlocks[i] != 0) {
        pool.free(s.windowBlocks[i]);
      }
    }
    s.numBlocks = 0;
    s.numWindowBlocks = 0;
    s.numCachedBlocks = 0;
  }

  /** Prompt tokens a request with these tokens would find in the GPU prefix cache now; changes nothing. */
  int cachedPrefixTokens(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    if (!config.enablePrefixCaching() || tokens.length < 2) {
      return 0;
    }
    int maxBlocks = (tokens.length - 1) / blockSize;
    long[] hashes = new long[maxBlocks];
    long parent = 0;
    int b = 0;
    for (; b < maxBlocks; b++) {
      parent = hasher.hash(parent, tokens, b * blockSize, blockSize, lora, cacheSalt);
      hashes[b] = parent;
      if (pool.lookup(parent, full) < 0) {
        break;
      }
    }
    if (window > 0 && b > 0) {
      b = windowHit(hashes, b);
    }
    if (mambaGroups > 0 && b > 0) {
      b = mambaHit(hashes, b);
    }
    return b * blockSize;
  }

  /** The engine's hash of a token sequence's full blocks. */
  long[] engineHashes(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    long[] out = new long[tokens.length / blockSize];
    long parent = 0;
    for (int b = 0; b < out.length; b++) {
      parent = hasher.hash(parent, tokens, b * blockSize, blockSize, lora, cacheSalt);
      out[b] = parent;
    }
    return out;
  }

  static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }
}
