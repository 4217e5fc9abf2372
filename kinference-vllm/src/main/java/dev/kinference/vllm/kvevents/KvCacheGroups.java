package dev.kinference.vllm.kvevents;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.HybridGroups;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.OffloadedPrefixes;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * One endpoint's KV-cache groups and tiers, as its events describe them: which group's events feed the cache index,
 * which go to the other groups' {@link HybridGroups} (the core's one home of vLLM's hybrid hit rule, which
 * {@link HybridCacheIndex} cuts hits with), and which to the offload tier.
 *
 * <ul>
 *   <li>The <em>indexed</em> group is the first full-attention group the events name; until one is named, the first
 *       group seen (group 0 of a server that does not describe its groups, as before). When a full-attention group
 *       turns up after another group was indexed, the endpoint's index entries are cleared and that group indexed;
 *       the group indexed before is tracked as the others are.</li>
 *   <li>Every other group of the GPU tier is tracked by {@link #hybrid()}, which limits hits as vLLM does.</li>
 *   <li>Blocks of another tier ({@code medium} {@code CPU}, from vLLM's offloading connector) are never indexed as
 *       GPU hits: they are counted apart ({@link #otherTierBlocks}) and kept under router keys in an
 *       {@link OffloadedPrefixes} ({@link #offloaded}), which routing credits at its reload cost.</li>
 * </ul>
 *
 * <p>Thread-safety: the subscriber's thread applies events; lookups ask {@link #hybrid()} from any thread. Each call
 * holds this object's monitor (and the groups' one), uncontended but for one endpoint's events against its lookups.
 */
final class KvCacheGroups {

  /** What to do with one event. */
  enum Route {
    /** Apply it to the cache index. */
    INDEX,
    /** Clear the endpoint's entries, then apply it: the indexed group changed to this one. */
    CLEAR_THEN_INDEX,
    /** Tracked apart (another group, another tier) or dropped (a group not yet described). */
    KEPT_APART
  }

  private static final int NONE = -1;

  private int indexed = NONE;
  private boolean indexedIsFullAttention;
  private final HybridGroups hybrid;
  /** Engine hashes the other tiers hold (boxed: offload events are rare beside lookups, as in the tier itself). */
  private final Set<Long> otherTier = new HashSet<>();
  private final OffloadedPrefixes offloaded;
  private LongFunction<@Nullable Long> gpuKeyOf = hash -> null;
  private long undescribedEvents;

  KvCacheGroups(String model) {
    this(model, OffloadedPrefixes.DEFAULT_RELOAD_TOKENS_PER_SECOND);
  }

  KvCacheGroups(String model, double reloadTokensPerSecond) {
    this.hybrid = new HybridGroups(model);
    this.offloaded = new OffloadedPrefixes(model, reloadTokensPerSecond);
  }

  /** The endpoint's offload tier, under router keys. */
  OffloadedPrefixes offloaded() {
    return offloaded;
  }

  /** The endpoint's groups beside the indexed one: register them with a {@link HybridCacheIndex}. */
  HybridGroups hybrid() {
    return hybrid;
  }

  /**
   * Applies {@code batch} to {@code index} for {@code endpoint}: each event of the indexed group goes to the index,
   * the others are tracked apart; {@code clearIndex} runs (it must clear the endpoint's entries in the index, not
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
          KvEvent indexed = hybrid.indexedEvent(e, gpuKeyOf);
          if (indexed != null) {
            index.onEvent(endpoint, indexed);
          }
        }
        case CLEAR_THEN_INDEX -> {
          clearIndex.run();
          hybrid.clearIndexedCopies();
          KvEvent indexed = hybrid.indexedEvent(e, gpuKeyOf);
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
    HybridGroups.Role role = group.role();
    Route route = Route.INDEX;
    if (indexed == NONE) {
      indexed = group.index();
      indexedIsFullAttention = role == HybridGroups.Role.FULL_ATTENTION;
    } else if (role == HybridGroups.Role.FULL_ATTENTION && !indexedIsFullAttention && group.index() != indexed) {
      // the indexed group was not full attention (a sliding-window group 0, say): this one is what is indexed now
      indexed = group.index(); // the group indexed before stays tracked, with what it holds
      indexedIsFullAttention = true;
      route = Route.CLEAR_THEN_INDEX;
    }
    if (group.index() == indexed) {
      if (!indexedIsFullAttention) {
        track(event, group, true); // indexed for want of a full-attention group, it still limits hits its way
      }
      return route;
    }
    track(event, group, false);
    return Route.KEPT_APART;
  }

  /** The endpoint's entries were cleared (a resync): forget every group's blocks too. */
  synchronized void clear() {
    clearOthers();
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
    hybrid.clear();
    otherTier.clear();
    offloaded.clear();
  }

  private void track(KvEvent event, KvCacheGroup group, boolean indexedToo) {
    boolean kept = hybrid.apply(group.index(), group.role(), group.slidingWindow(), event, gpuKeyOf);
    if (!kept && !indexedToo) {
      undescribedEvents++; // an event of a group never described, not indexed: nothing to match it with
    }
  }

  private void trackOtherTier(KvEvent event) {
    offloaded.onEvent(event, gpuKeyOf);
    switch (event) {
      case KvEvent.BlockStored s -> {
        for (long hash : s.blockHashes()) {
          otherTier.add(hash);
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
