package dev.kinference.vllm.kvevents;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.OffloadedPrefixes;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * One endpoint's KV-cache groups and tiers, as its events describe them: which group's events feed the cache index,
 * and how far the other groups let a prefix hit reach.
 *
 * <p>What is implemented, following vLLM's hybrid KV-cache coordinator ({@code vllm/v1/core/kv_cache_coordinator.py}):
 * <ul>
 *   <li>The <em>indexed</em> group is the first full-attention group the events name; until one is named, the first
 *       group seen (group 0 of a server that does not describe its groups, as before). When a full-attention group
 *       turns up after another group was indexed, the endpoint's index entries are cleared and that group indexed;
 *       the group indexed before is tracked as the others are.</li>
 *   <li>Every other group of the GPU tier is tracked here under the router's own block keys (recomputed from the
 *       events' tokens), and {@link #limit} shortens a hit as vLLM does, repeating until no group shortens it:
 *       another full-attention group keeps the hit to the blocks it holds from the start; a sliding-window group of
 *       window {@code w} tokens and blocks of {@code b} tokens needs the {@code ceil((w - 1) / b)} blocks before the
 *       hit's end (or every block from the start, for a shorter hit); a Mamba group needs the hit's last block
 *       (vLLM's {@code MambaManager} in {@code mamba_cache_mode} align, which keeps states only at some block
 *       boundaries: a hit ends at the last block whose state every Mamba group holds). A group's
 *       {@code BlockStored} lists only the blocks it holds, the last ones of the span its tokens cover; a parent it
 *       holds no block for is keyed through the indexed group.
 *       Groups of other kinds (cross, encoder-only, chunked-local attention) do not limit a hit.</li>
 *   <li>A group whose block size differs from the indexed group's is tracked but cannot be compared block for
 *       block: it does not limit hits (vLLM's fine-grained Mamba alignment is not modelled).</li>
 *   <li>Blocks of another tier ({@code medium} {@code CPU}, from vLLM's offloading connector) are never indexed as
 *       GPU hits: they are counted apart ({@link #otherTierBlocks}) and kept under router keys in an
 *       {@link OffloadedPrefixes} ({@link #offloaded}), which routing credits at its reload cost.</li>
 * </ul>
 *
 * <p>Thread-safety: the subscriber's thread applies events; lookups call {@link #limit} from any thread. Each call
 * holds this object's monitor, uncontended but for one endpoint's events against its lookups.
 */
final class KvCacheGroups {

  /** What to do with one event. */
  enum Route {
    /** Apply it to the cache index. */
    INDEX,
    /** Clear the endpoint's entries, then apply it: the indexed group changed to this one. */
    CLEAR_THEN_INDEX,
    /** Tracked here (another group, another tier) or dropped (a group not yet described). */
    KEPT_APART
  }

  private static final int NONE = -1;

  private final String model;
  private int indexed = NONE;
  private boolean indexedIsFullAttention;
  private final List<Group> others = new ArrayList<>(2);
  private final LongCounts otherTier = new LongCounts(16);
  /** Extra copies of indexed blocks: engine hash to the copies beyond the one the index holds. */
  private final LongCounts copies = new LongCounts(16);
  private final OffloadedPrefixes offloaded;
  private LongFunction<@Nullable Long> gpuKeyOf = hash -> null;
  private long undescribedEvents;

  KvCacheGroups(String model) {
    this(model, OffloadedPrefixes.DEFAULT_RELOAD_TOKENS_PER_SECOND);
  }

  KvCacheGroups(String model, double reloadTokensPerSecond) {
    this.model = model;
    this.offloaded = new OffloadedPrefixes(model, reloadTokensPerSecond);
  }

  /** The endpoint's offload tier, under router keys. */
  OffloadedPrefixes offloaded() {
    return offloaded;
  }

  /** One tracked group that is not indexed. */
  private static final class Group {
    final int index;
    KvCacheGroup.Role role;
    int slidingWindow;
    int blockSize;
    final LongCounts engineToKey = new LongCounts(64);
    final LongCounts keys = new LongCounts(64);
    /** Copies of a hash beyond the first (vLLM may cache a hash twice and removes each copy on its own). */
    final LongCounts copies = new LongCounts(16);

    Group(int index, KvCacheGroup.Role role, int slidingWindow) {
      this.index = index;
      this.role = role;
      this.slidingWindow = slidingWindow;
    }

    void clear() {
      engineToKey.clear();
      keys.clear();
      copies.clear();
    }

    boolean holds(long key) {
      return keys.get(key) != LongCounts.MISSING;
    }

    /** How far this group lets a hit of {@code hit} blocks of {@code keys} reach. */
    int limit(PrefixKeys prompt, int hit) {
      if (blockSize != prompt.blockSize()) {
        return hit;
      }
      return switch (role) {
        case FULL_ATTENTION -> {
          int i = 0;
          while (i < hit && holds(prompt.key(i))) {
            i++;
          }
          yield i;
        }
        case SLIDING_WINDOW -> {
          int window = Math.max(1, (slidingWindow - 1 + blockSize - 1) / blockSize);
          int run = 0;
          for (int i = hit - 1; i >= 0; i--) {
            if (holds(prompt.key(i))) {
              if (++run >= window) {
                yield i + window;
              }
            } else {
              run = 0;
            }
          }
          yield run; // fewer blocks than a window, all held from the start
        }
        case MAMBA -> {
          int i = hit;
          while (i > 0 && !holds(prompt.key(i - 1))) {
            i--;
          }
          yield i;
        }
        case OTHER, UNKNOWN -> hit;
      };
    }
  }

  /**
   * Applies {@code batch} to {@code index} for {@code endpoint}: each event of the indexed group goes to the index,
   * the others are tracked here; {@code clearIndex} runs (it must clear the endpoint's entries in the index, not
   * this object's) when a full-attention group takes over from the group indexed before. Returns the number
   * of events kept apart.
   */
  int apply(KvEventBatch batch, CacheIndex index, EndpointState endpoint, Runnable clearIndex) {
    useGpuKeysOf(index, endpoint);
    List<KvEvent> events = batch.events();
    int keptApart = 0;
    for (int i = 0; i < events.size(); i++) {
      KvEvent e = events.get(i);
      switch (route(e, batch.groups().get(i))) {
        case INDEX -> {
          KvEvent indexed = withoutCopies(e);
          if (indexed != null) {
            index.onEvent(endpoint, indexed);
          }
        }
        case CLEAR_THEN_INDEX -> {
          clearIndex.run();
          clearCopies();
          KvEvent indexed = withoutCopies(e);
          if (indexed != null) {
            index.onEvent(endpoint, indexed);
          }
        }
        case KEPT_APART -> keptApart++;
      }
    }
    return keptApart;
  }

  /**
   * Offload events without tokens are keyed through the endpoint's GPU blocks of the same hash, when {@code index}
   * (or the index a {@link HybridCacheIndex} wraps) is a {@link PreciseCacheIndex}.
   */
  synchronized void useGpuKeysOf(CacheIndex index, EndpointState endpoint) {
    CacheIndex base = index instanceof HybridCacheIndex h ? h.delegate() : index;
    if (base instanceof PreciseCacheIndex precise) {
      gpuKeyOf = hash -> precise.routerKey(endpoint, hash);
    }
  }

  /** Decides what to do with {@code event} of {@code group}, and tracks it when it is kept apart. */
  synchronized Route route(KvEvent event, KvCacheGroup group) {
    if (event instanceof KvEvent.AllBlocksCleared) {
      clearOthers();
      return Route.INDEX;
    }
    KvEvent.Medium medium = switch (event) {
      case KvEvent.BlockStored s -> s.medium();
      case KvEvent.BlockRemoved r -> r.medium();
      case KvEvent.AllBlocksCleared c -> KvEvent.Medium.GPU;
    };
    if (medium != KvEvent.Medium.GPU) {
      trackOtherTier(event);
      return Route.KEPT_APART;
    }
    KvCacheGroup.Role role = group.role();
    Route route = Route.INDEX;
    if (indexed == NONE) {
      indexed = group.index();
      indexedIsFullAttention = role == KvCacheGroup.Role.FULL_ATTENTION;
    } else if (role == KvCacheGroup.Role.FULL_ATTENTION && !indexedIsFullAttention && group.index() != indexed) {
      // the indexed group was not full attention (a sliding-window group 0, say): this one is what is indexed now
      indexed = group.index(); // the group indexed before stays tracked, with what it holds
      indexedIsFullAttention = true;
      route = Route.CLEAR_THEN_INDEX;
    }
    if (group.index() == indexed) {
      if (!indexedIsFullAttention) {
        track(event, group, role, true); // indexed for want of a full-attention group, it still limits hits its way
      }
      return route;
    }
    track(event, group, role, false);
    return Route.KEPT_APART;
  }

  /**
   * {@code event} of the indexed group as the index should see it: vLLM keeps a second block of a hash it already
   * caches (a request whose hit another group cut short computes those blocks again) and removes each copy on its
   * own, so a {@code BlockRemoved} of a hash of which another copy stays is not passed on (null if nothing is left).
   * Only extra copies are counted here: a stored hash the index already holds is one.
   */
  private synchronized @Nullable KvEvent withoutCopies(KvEvent event) {
    return switch (event) {
      case KvEvent.BlockStored s -> {
        if (s.medium() == KvEvent.Medium.GPU) {
          for (long hash : s.blockHashes()) {
            if (gpuKeyOf.apply(hash) != null) {
              copies.add(hash, 1);
            }
          }
        }
        yield event;
      }
      case KvEvent.BlockRemoved r -> withoutCopies(r);
      case KvEvent.AllBlocksCleared c -> {
        copies.clear();
        yield event;
      }
    };
  }

  private @Nullable KvEvent withoutCopies(KvEvent.BlockRemoved r) {
    if (r.medium() != KvEvent.Medium.GPU || copies.size() == 0) {
      return r;
    }
    long[] hashes = r.blockHashes();
    long[] kept = new long[hashes.length];
    int n = 0;
    for (long hash : hashes) {
      if (copies.get(hash) > 0) {
        copies.add(hash, -1);
      } else {
        kept[n++] = hash;
      }
    }
    if (n == hashes.length) {
      return r;
    }
    return n == 0 ? null : new KvEvent.BlockRemoved(java.util.Arrays.copyOf(kept, n), r.medium());
  }

  private synchronized void clearCopies() {
    copies.clear();
  }

  /** The endpoint's entries were cleared (a resync): forget every group's blocks too. */
  synchronized void clear() {
    clearOthers();
  }

  /**
   * How far a hit of {@code hit} leading blocks of {@code prompt}, found in the indexed group, reaches once every
   * other group of the GPU tier has had its say (vLLM's fixed point: each group may only shorten it).
   */
  synchronized int limit(PrefixKeys prompt, int hit) {
    if (others.isEmpty() || hit == 0) {
      return hit;
    }
    int current = hit;
    while (true) {
      int next = current;
      for (Group g : others) {
        next = Math.min(next, g.limit(prompt, next));
      }
      if (next == current) {
        return current;
      }
      current = next;
    }
  }

  /** Blocks of tiers other than the GPU (CPU offload) held now, counted apart from the index. */
  synchronized long otherTierBlocks() {
    return otherTier.size();
  }

  /** Events of groups that were neither indexed nor described (so neither counted nor tracked). */
  synchronized long undescribedEvents() {
    return undescribedEvents;
  }

  /** The indexed group, or -1 before the first event. */
  synchronized int indexedGroup() {
    return indexed;
  }

  private void clearOthers() {
    copies.clear();
    for (Group g : others) {
      g.clear();
    }
    otherTier.clear();
    offloaded.clear();
  }

  private void track(KvEvent event, KvCacheGroup group, KvCacheGroup.Role role, boolean indexedToo) {
    Group g = null;
    for (Group candidate : others) {
      if (candidate.index == group.index()) {
        g = candidate;
      }
    }
    if (g == null) {
      if (role == KvCacheGroup.Role.UNKNOWN) {
        if (!indexedToo) {
          undescribedEvents++; // an event of a group never described, not indexed: nothing to match it with
        }
        return;
      }
      g = new Group(group.index(), role, group.slidingWindow());
      others.add(g);
    } else if (role != KvCacheGroup.Role.UNKNOWN) {
      g.role = role;
      g.slidingWindow = group.slidingWindow();
    }
    switch (event) {
      case KvEvent.BlockStored s -> store(g, s);
      case KvEvent.BlockRemoved r -> {
        for (long hash : r.blockHashes()) {
          if (g.copies.get(hash) > 0) {
            g.copies.add(hash, -1); // another copy stays
            continue;
          }
          long key = g.engineToKey.remove(hash);
          if (key != LongCounts.MISSING) {
            g.keys.add(key, -1);
          }
        }
      }
      case KvEvent.AllBlocksCleared c -> g.clear();
    }
  }

  private void store(Group g, KvEvent.BlockStored s) {
    if (!s.hasTokens()) {
      return;
    }
    g.blockSize = s.blockSize();
    long key;
    Long parent = s.parentBlockHash();
    if (parent == null) {
      key = BlockKeys.seed(model, s.loraName(), s.cacheSalt());
    } else {
      key = g.engineToKey.get(parent);
      if (key == LongCounts.MISSING) {
        // a Mamba group's parent is usually a block it holds no state for: its key is the indexed group's
        Long indexedKey = gpuKeyOf.apply(parent);
        if (indexedKey == null) {
          return; // its parent was missed: these blocks cannot be keyed (a resync follows the gap)
        }
        key = indexedKey;
      }
    }
    long[] hashes = s.blockHashes();
    // vLLM lists only the blocks a group holds (cache_full_blocks skips null blocks) but sends the tokens of every
    // block of the span; the null ones come first (a Mamba group holds the state of the span's last block, a
    // sliding-window group the blocks within its window)
    int spanBlocks = Math.max(hashes.length, s.tokenIds().length / s.blockSize());
    int firstHeld = spanBlocks - hashes.length;
    for (int b = 0; b < spanBlocks; b++) {
      key = BlockKeys.next(key, s.tokenIds(), b * s.blockSize(), s.blockSize());
      if (b < firstHeld) {
        continue;
      }
      long hash = hashes[b - firstHeld];
      long previous = g.engineToKey.get(hash);
      if (previous == key) {
        g.copies.add(hash, 1);
      } else {
        if (previous != LongCounts.MISSING) {
          g.keys.add(previous, -1);
        }
        g.engineToKey.put(hash, key);
        g.keys.add(key, 1);
      }
    }
  }

  private void trackOtherTier(KvEvent event) {
    offloaded.onEvent(event, gpuKeyOf);
    switch (event) {
      case KvEvent.BlockStored s -> {
        for (long hash : s.blockHashes()) {
          otherTier.put(hash, 1);
        }
      }
      case KvEvent.BlockRemoved r -> {
        for (long hash : r.blockHashes()) {
          otherTier.remove(hash);
        }
      }
      case KvEvent.AllBlocksCleared c -> otherTier.clear();
    }
  }
}
