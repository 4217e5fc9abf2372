package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * vLLM V1's block pool ({@code vllm/v1/core/block_pool.py}): {@code numGpuBlocks} blocks, block 0 reserved as the
 * null block; a doubly linked free queue in eviction order (allocation pops the head, freeing appends to the tail,
 * a prefix hit on a free block takes it out of the middle); and the prefix cache, a map from block hash to the
 * blocks holding it. Duplicates are kept, as in vLLM (block tables are append-only): a hit uses the first. Popping a
 * block that still has a hash evicts it and records a {@code BlockRemoved}.
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
  private final Map<Long, int[]> cached = new HashMap<>();
  private int cachedBlockCount;
  private final List<KvEvent> events;

  BlockPool(int numBlocks, List<KvEvent> events) {
    if (numBlocks < 2) {
      throw new IllegalArgumentException("need at least 2 blocks (one is the null block): " + numBlocks);
    }
    this.numBlocks = numBlocks;
    this.refCount = new int[numBlocks];
    this.hashOf = new long[numBlocks];
    this.prev = new int[numBlocks];
    this.next = new int[numBlocks];
    this.inFreeQueue = new boolean[numBlocks];
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

  /** The first block holding {@code hash}, or -1. */
  int lookup(long hash) {
    int[] blocks = cached.get(hash);
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

  /** Registers a newly full block under {@code hash}. */
  void cache(int block, long hash) {
    if (hashOf[block] != NO_HASH) {
      throw new IllegalStateException("block " + block + " already cached");
    }
    hashOf[block] = hash;
    int[] blocks = cached.get(hash);
    if (blocks == null) {
      cached.put(hash, new int[] {1, block});
    } else {
      if (blocks[0] + 1 == blocks.length) {
        blocks = Arrays.copyOf(blocks, blocks.length * 2);
        cached.put(hash, blocks);
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
    cached.clear();
    cachedBlockCount = 0;
    events.add(new KvEvent.AllBlocksCleared());
    return true;
  }

  /** The distinct hashes held, for tests. */
  java.util.Set<Long> cachedHashes() {
    return java.util.Set.copyOf(cached.keySet());
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
    int[] blocks = cached.get(hash);
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
        cached.remove(hash);
      }
      cachedBlockCount--;
      events.add(new KvEvent.BlockRemoved(new long[] {hash}, KvEvent.Medium.GPU));
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
