package dev.kinference.cache;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A cache index fed by the servers' KV-cache events: it knows what each server holds, up to the event delay.
 *
 * <p>Engine block hashes are mapped to router keys recomputed from each event's {@code token_ids} with the router's
 * own hash chain (seeded with the endpoint's model, the event's LoRA adapter and cache salt), as llm-d does, so the
 * router needs neither vLLM's {@code PYTHONHASHSEED} nor its hash algorithm. Each endpoint keeps its
 * engine-hash-to-key map so that {@code BlockRemoved} can be applied.
 *
 * <p>Only GPU-tier blocks are indexed: they are what serves a prefix hit. Events for other tiers are counted and
 * ignored. A {@code BlockStored} whose parent is unknown (an event was missed) cannot be keyed and is counted as
 * orphaned; the subscriber's gap handling resynchronises the endpoint.
 *
 * <p>Each endpoint's blocks also keep their parent links, so the index knows whether they are prefix-closed (every
 * block's parent held too): vLLM evicts a request's blocks tail first, which keeps them so, and lookups then find a
 * prompt's cached prefix by bisection in a few probes. An endpoint whose events removed a block before its children
 * ({@link #isPrefixClosed} false) is looked up block by block, exactly, until its entries are cleared.
 *
 * <p>A prompt the router sent to an endpoint counts as held there until its first token
 * ({@link EndpointState#promptsAwaitingFirstToken()}): the server caches its blocks as its prefill is scheduled, before
 * the events arrive, and a request sharing its prefix that is queued behind it finds them.
 *
 * <p>Thread-safety: see {@link CacheIndex}. Each endpoint's map is guarded by its own monitor, uncontended when
 * one thread applies that endpoint's events.
 */
public final class PreciseCacheIndex extends BlockIndexBase {

  /** Counters of what the index did with the events it was given. */
  public record Stats(long eventsApplied, long blocksStored, long blocksRemoved, long orphanedBlocks,
      long blocksWithoutTokens, long otherTierEvents, long entries, long distinctBlocks) {}

  private static final long MISSING = EngineBlockMap.MISSING;

  private final SlotMap<EndpointBlocks> bySlot = new SlotMap<>();
  private final LongAdder eventsApplied = new LongAdder();
  private final LongAdder blocksStored = new LongAdder();
  private final LongAdder blocksRemoved = new LongAdder();
  private final LongAdder orphanedBlocks = new LongAdder();
  private final LongAdder blocksWithoutTokens = new LongAdder();
  private final LongAdder otherTierEvents = new LongAdder();

  /** One endpoint's engine hash to router key map; its monitor guards it. */
  private static final class EndpointBlocks {
    final EndpointState endpoint;
    /** Starts small: in a fleet of a thousand endpoints most hold few blocks, and memory follows what is cached. */
    final EngineBlockMap engineToKey = new EngineBlockMap(0);
    boolean removed;
    /** Router keys of the event being applied. */
    long[] keys = new long[16];
    /** Keeps the cache-warming reads of {@link EngineBlockMap#touch} and {@link BlockTable#touch} alive. */
    @SuppressWarnings("UnusedVariable") // written, never read: its only job is to keep those reads
    long touched;

    long[] keys(int n) {
      if (keys.length < n) {
        keys = new long[Math.max(n, keys.length * 2)];
      }
      return keys;
    }

    EndpointBlocks(EndpointState endpoint) {
      this.endpoint = endpoint;
    }
  }

  /** Public for {@link java.util.ServiceLoader}. */
  public PreciseCacheIndex() {}

  @Override
  public String name() {
    return "precise";
  }

  @Override
  public boolean isPrecise() {
    return true;
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    bySlot.put(endpoint.slot(), new EndpointBlocks(endpoint));
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    EndpointBlocks blocks = bySlot.remove(endpoint.slot());
    if (blocks != null) {
      synchronized (blocks) {
        blocks.removed = true;
        clear(blocks);
      }
    }
  }

  /** The blocks the events say each candidate holds, or more where a prompt sent there awaits its first token. */
  @Override
  public void lookup(PrefixKeys keys, EndpointState[] candidates, int count, int[] matchedBlocks) {
    super.lookup(keys, candidates, count, matchedBlocks);
    for (int i = 0; i < count; i++) {
      matchedBlocks[i] = candidates[i].promptsAwaitingFirstToken().credited(matchedBlocks[i], keys);
    }
  }

  @Override
  public void onEvent(EndpointState endpoint, KvEvent event) {
    EndpointBlocks blocks = blocksOf(endpoint);
    if (blocks == null) {
      return;
    }
    synchronized (blocks) {
      if (blocks.removed) {
        return;
      }
      switch (event) {
        case KvEvent.BlockStored stored -> store(blocks, stored);
        case KvEvent.BlockRemoved removed -> remove(blocks, removed);
        case KvEvent.AllBlocksCleared cleared -> clear(blocks);
      }
    }
    eventsApplied.increment();
  }

  /** Forgets everything known of {@code endpoint}, as after a server restart or a gap in its event stream. */
  public void clearEndpoint(EndpointState endpoint) {
    onEvent(endpoint, new KvEvent.AllBlocksCleared());
  }

  /** Blocks indexed for {@code endpoint}. */
  public int blockCount(EndpointState endpoint) {
    EndpointBlocks blocks = blocksOf(endpoint);
    if (blocks == null) {
      return 0;
    }
    synchronized (blocks) {
      return blocks.engineToKey.size();
    }
  }

  /** The router key an engine hash of {@code endpoint} maps to, or null. */
  public @Nullable Long routerKey(EndpointState endpoint, long engineHash) {
    EndpointBlocks blocks = blocksOf(endpoint);
    if (blocks == null) {
      return null;
    }
    synchronized (blocks) {
      long k = blocks.engineToKey.get(engineHash);
      return k == MISSING ? null : k;
    }
  }

  @Override
  public long entryCount() {
    long n = 0;
    for (EndpointBlocks b : bySlot.values()) {
      synchronized (b) {
        n += b.engineToKey.size();
      }
    }
    return n;
  }

  /** Bytes held by the index's arrays: the shared table plus every endpoint's map. */
  public long arrayBytes() {
    long n = table.arrayBytes();
    for (EndpointBlocks b : bySlot.values()) {
      synchronized (b) {
        n += b.engineToKey.arrayBytes();
      }
    }
    return n;
  }

  public Stats stats() {
    return new Stats(eventsApplied.sum(), blocksStored.sum(), blocksRemoved.sum(), orphanedBlocks.sum(),
        blocksWithoutTokens.sum(), otherTierEvents.sum(), entryCount(), distinctBlocks());
  }

  private @Nullable EndpointBlocks blocksOf(EndpointState endpoint) {
    EndpointBlocks blocks = bySlot.get(endpoint.slot());
    return blocks != null && blocks.endpoint == endpoint ? blocks : null;
  }

  private void store(EndpointBlocks blocks, KvEvent.BlockStored e) {
    if (e.medium() != KvEvent.Medium.GPU) {
      otherTierEvents.increment();
      return;
    }
    long[] hashes = e.blockHashes();
    if (!e.hasTokens()) {
      blocksWithoutTokens.add(hashes.length);
      return;
    }
    EngineBlockMap map = blocks.engineToKey;
    int n = hashes.length;
    long parentKey;
    int parentAt;
    long parentHash;
    Long eventParent = e.parentBlockHash();
    if (eventParent == null) {
      parentKey = BlockKeys.seed(blocks.endpoint.endpoint().model(), e.loraName(), e.cacheSalt());
      parentAt = -1;
      parentHash = 0;
    } else {
      parentHash = eventParent;
      parentAt = map.find(parentHash);
      if (parentAt < 0) {
        orphanedBlocks.add(n);
        return;
      }
      parentKey = map.keyAt(parentAt);
    }
    int slot = blocks.endpoint.slot();
    int[] tokens = e.tokenIds();
    int size = e.blockSize();
    long[] keys = blocks.keys(n);
    for (int i = 0; i < n; i++) {
      parentKey = BlockKeys.next(parentKey, tokens, i * size, size);
      keys[i] = parentKey;
    }
    // Warm every entry the event will write, all at once, before the writes (each takes a lock) go one by one.
    blocks.touched ^= map.touch(hashes, n) ^ table.touch(keys, n);
    for (int i = 0; i < n; i++) {
      long key = keys[i];
      long hash = hashes[i];
      int at = map.find(hash);
      if (at < 0) {
        at = map.insert(hash, key, parentAt, parentHash);
      } else {
        long previous = map.keyAt(at);
        if (previous != key) {
          map.setKeyAt(at, key);
          table.remove(previous, slot);
        }
      }
      table.add(key, slot);
      parentAt = at;
      parentHash = hash;
    }
    blocksStored.add(n);
  }

  private void remove(EndpointBlocks blocks, KvEvent.BlockRemoved e) {
    if (e.medium() != KvEvent.Medium.GPU) {
      otherTierEvents.increment();
      return;
    }
    int slot = blocks.endpoint.slot();
    long[] hashes = e.blockHashes();
    int n = hashes.length;
    long[] keys = blocks.keys(n);
    blocks.touched ^= blocks.engineToKey.touch(hashes, n);
    int found = 0;
    for (long hash : hashes) {
      long key = blocks.engineToKey.remove(hash);
      if (key != MISSING) {
        keys[found++] = key;
      }
    }
    // The map said whether these removals broke prefix closure before the table changes below open any gap.
    blocks.touched ^= table.touch(keys, found);
    for (int i = 0; i < found; i++) {
      table.remove(keys[i], slot);
    }
    blocksRemoved.add(found);
  }

  private void clear(EndpointBlocks blocks) {
    int slot = blocks.endpoint.slot();
    blocks.engineToKey.forEach((hash, key) -> table.remove(key, slot));
    blocks.engineToKey.clear();
  }

  @Override
  boolean prefixClosed(EndpointState endpoint) {
    return isPrefixClosed(endpoint);
  }

  /**
   * Whether every block indexed for {@code endpoint} has its parent indexed too, so lookups find its prefix by
   * bisection; false once an event removed a block before its children (and until the endpoint is cleared).
   */
  public boolean isPrefixClosed(EndpointState endpoint) {
    EndpointBlocks blocks = blocksOf(endpoint);
    return blocks == null || blocks.engineToKey.prefixClosed();
  }
}
