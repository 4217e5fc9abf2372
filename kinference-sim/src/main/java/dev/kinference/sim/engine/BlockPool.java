package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * vLLM V1's block pool ({@code vllm/v1/core/block_pool.py}): {@code numGpuBlocks} blocks, block 0 reserved as the
 * null block; a doubly linked free queue in eviction order (allocation pops the head, freeing appends to the tail,
 * a prefix hit on a free block takes it out of the middle); and the prefix cache, a map from block hash to the
 * blocks holding it. Duplicates are kept, as in vLLM (block tables are append-only): a hit uses the first. Popping a
 * block that still has a hash evicts it and records a {@code BlockRemoved}. A hybrid model's KV-cache groups share
 * the pool, as in vLLM: each cached block belongs to one group, and a hash is looked up within a group (vLLM keys
 * its prefix cache by {@code BlockHashWithGroupId}).
 *
 * <p>Not thread-safe; owned by one {@link SimEngine}.
 */
final class BlockPool {

  private static final int NONE = -1;
  private static final long NO_HASH = 0;

  private final int numBlocks;
  private final int[] refCount;
  private final long[] hashOf;
  private final int[] prev;
  private final int[] next;
  private final boolean[] inFreeQueue;
  private int head = NONE;
  private int tail = NONE;
  private int freeCount;
  private final int[] groupOf;
  private final List<Map<Long, int[]>> cached;
  private int cachedBlockCount;
  private final KvEventLog events;

  BlockPool(int numBlocks, KvEventLog events) {
    this(numBlocks, 1, events);
  }

  BlockPool(int numBlocks, int groups, KvEventLog events) {
    if (numBlocks < 2) {
      throw new IllegalArgumentException("need at least 2 blocks (one is the null block): " + numBlocks);
    }
    this.numBlocks = numBlocks;
    this.refCount = new int[numBlocks];
    this.hashOf = new long[numBlocks];
    this.prev = new int[numBlocks];
    this.next = new int[numBlocks];
    this.inFreeQueue = new boolean[numBlocks];
    this.groupOf = new int[numBlocks];
    this.cached = new ArrayList<>(groups);
    for (int g = 0; g < groups; g++) {
      cached.add(new HashMap<>());
    }
    this.events = events;
    for (int b = 1; b < numBlocks; b++) {
      append(b);
    }
  }

  int numBlocks() {
    return numBlocks;
  }

  /** Blocks that can be allocated: free ones, cached or not. */
  int freeCount() {
    return freeCount;
  }

  /** vLLM's {@code kv_cache_usage_perc}. */
  double usage() {
    return 1.0 - (double) freeCount / (numBlocks - 1);
  }

  int refCount(int block) {
    return refCount[block];
  }

  /** The block's prefix-cache hash, or 0. */
  long hashOf(int block) {
    return hashOf[block];
  }

  boolean isFree(int block) {
    return inFreeQueue[block];
  }

  /** Blocks holding a hash. */
  int cachedBlockCount() {
    return cachedBlockCount;
  }

  /** The first block of group 0 holding {@code hash}, or -1. */
  int lookup(long hash) {
    return lookup(hash, 0);
  }

  /** The first block of group {@code group} holding {@code hash}, or -1. */
  int lookup(long hash, int group) {
    int[] blocks = cached.get(group).get(hash);
    return blocks == null ? NONE : blocks[1];
  }

  /** Takes the head of the free queue, evicting its cached hash if it has one; its reference count becomes 1. */
  int allocate() {
    int b = head;
    if (b == NONE) {
      throw new IllegalStateException("no free block");
    }
    unlink(b);
    evict(b);
    refCount[b] = 1;
    return b;
  }

  /** A prefix hit: the block gains a reference and leaves the free queue if it was there. */
  void touch(int block) {
    if (refCount[block] == 0) {
      unlink(block);
    }
    refCount[block]++;
  }

  /** Drops a reference; at zero the block joins the free queue's tail, keeping its hash (it stays cached). */
  void free(int block) {
    if (refCount[block] <= 0) {
      throw new IllegalStateException("block " + block + " freed twice");
    }
    if (--refCount[block] == 0) {
      append(block);
    }
  }

  /** Registers a newly full block of group 0 under {@code hash}. */
  void cache(int block, long hash) {
    cache(block, hash, 0);
  }

  /** Registers a newly full block of group {@code group} under {@code hash}. */
  void cache(int block, long hash, int group) {
    if (hashOf[block] != NO_HASH) {
      throw new IllegalStateException("block " + block + " already cached");
    }
    hashOf[block] = hash;
    groupOf[block] = group;
    Map<Long, int[]> byHash = cached.get(group);
    int[] blocks = byHash.get(hash);
    if (blocks == null) {
      byHash.put(hash, new int[] {1, block});
    } else {
      if (blocks[0] + 1 == blocks.length) {
        blocks = Arrays.copyOf(blocks, blocks.length * 2);
        byHash.put(hash, blocks);
      }
      blocks[++blocks[0]] = block;
    }
    cachedBlockCount++;
  }

  /**
   * vLLM's {@code reset_prefix_cache}: forgets every hash if no block is in use, recording one
   * {@code AllBlocksCleared}.
   *
   * @return false (and nothing changes) if some block is in use
   */
  boolean resetPrefixCache() {
    if (freeCount != numBlocks - 1) {
      return false;
    }
    Arrays.fill(hashOf, NO_HASH);
    cached.forEach(Map::clear);
    cachedBlockCount = 0;
    events.add(new KvEvent.AllBlocksCleared(), 0);
    return true;
  }

  /** The distinct hashes group 0 holds, for tests. */
  java.util.Set<Long> cachedHashes() {
    return cachedHashes(0);
  }

  /** The distinct hashes group {@code group} holds, for tests. */
  java.util.Set<Long> cachedHashes(int group) {
    return java.util.Set.copyOf(cached.get(group).keySet());
  }

  /** Free-queue order from head (evicted first) to tail, for tests. */
  int[] freeQueueOrder() {
    int[] out = new int[freeCount];
    int i = 0;
    for (int b = head; b != NONE; b = next[b]) {
      out[i++] = b;
    }
    return out;
  }

  private void evict(int block) {
    long hash = hashOf[block];
    if (hash == NO_HASH) {
      return;
    }
    hashOf[block] = NO_HASH;
    int group = groupOf[block];
    Map<Long, int[]> byHash = cached.get(group);
    int[] blocks = byHash.get(hash);
    if (blocks != null) {
      int n = blocks[0];
      for (int i = 1; i <= n; i++) {
        if (blocks[i] == block) {
          System.arraycopy(blocks, i + 1, blocks, i, n - i);
          blocks[0] = n - 1;
          break;
        }
      }
      if (blocks[0] == 0) {
        byHash.remove(hash);
      }
      cachedBlockCount--;
      events.add(new KvEvent.BlockRemoved(new long[] {hash}, KvEvent.Medium.GPU), group);
    }
  }

  private void append(int b) {
    prev[b] = tail;
    next[b] = NONE;
    if (tail == NONE) {
      head = b;
    } else {
      next[tail] = b;
    }
    tail = b;
    inFreeQueue[b] = true;
    freeCount++;
  }

  private void unlink(int b) {
    if (!inFreeQueue[b]) {
      throw new IllegalStateException("block " + b + " is not free");
    }
    int p = prev[b];
    int n = next[b];
    if (p == NONE) {
      head = n;
    } else {
      next[p] = n;
    }
    if (n == NONE) {
      tail = p;
    } else {
      prev[n] = p;
    }
    inFreeQueue[b] = false;
    freeCount--;
  }
}
