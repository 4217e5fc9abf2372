package dev.kinference.sim.bench;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.OffloadedPrefixes;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.Prompts;

/**
 * An index of which server holds which prefix blocks, built from the servers' KV events, as llm-d's kv-cache
 * indexer and Dynamo's radix tree build theirs. Backed by the core's {@link PreciseCacheIndex} (a data structure;
 * the policies using it are the comparison routers' own). Blocks of the servers' offload tiers ({@code medium} CPU)
 * are kept apart per server, for routers that weigh a host-memory hit (Dynamo's tier credits).
 */
final class EventPrefixIndex {

  private final PreciseCacheIndex index = new PreciseCacheIndex();
  private final EndpointState[] states;
  private final int[] matched;
  private final int[] hostMatched;
  private final OffloadedPrefixes[] tiers;
  private final int blockSize;
  private final @org.jspecify.annotations.Nullable MambaStates mambaStates;
  /** {@link #index}, its hits cut to what a hybrid model's Mamba groups can reuse. */
  private final CacheIndex lookupIndex;

  EventPrefixIndex(FleetView view, int blockSize) {
    Fleet fleet = Fleet.of(view.endpoints());
    fleet.addListener(index);
    this.states = new EndpointState[view.size()];
    for (int i = 0; i < states.length; i++) {
      states[i] = java.util.Objects.requireNonNull(fleet.get(view.endpoints().get(i).id()));
    }
    this.matched = new int[states.length];
    this.hostMatched = new int[states.length];
    this.tiers = new OffloadedPrefixes[states.length];
    for (int i = 0; i < tiers.length; i++) {
      tiers[i] = new OffloadedPrefixes(view.model(), OffloadedPrefixes.DEFAULT_RELOAD_TOKENS_PER_SECOND);
    }
    this.blockSize = blockSize;
    MambaStates m = MambaStates.of(view.model(), view.size(), view.engine(0).config().model().mambaGroups(),
        blockSize);
    this.mambaStates = m;
    if (m != null) {
      HybridCacheIndex hybrid = HybridCacheIndex.wrap(index);
      m.registerWith(hybrid, states);
      this.lookupIndex = hybrid;
    } else {
      this.lookupIndex = index;
    }
  }

  void apply(int server, EngineStepEvents batch) {
    EndpointState state = states[server];
    MambaStates m = mambaStates;
    if (m != null) {
      m.apply(server, batch, hash -> index.routerKey(state, hash));
    }
    for (KvEvent event : batch.fullAttentionEvents()) {
      KvEvent e = m != null ? m.indexedEvent(server, event, hash -> index.routerKey(state, hash)) : event;
      if (e == null) {
        continue;
      }
      boolean gpu = switch (e) {
        case KvEvent.BlockStored s -> s.medium() == KvEvent.Medium.GPU;
        case KvEvent.BlockRemoved r -> r.medium() == KvEvent.Medium.GPU;
        case KvEvent.AllBlocksCleared c -> true;
      };
      if (gpu) {
        index.onEvent(state, e);
      }
      if (!gpu || e instanceof KvEvent.AllBlocksCleared) {
        tiers[server].onEvent(e, hash -> index.routerKey(state, hash));
      }
    }
  }

  /**
   * For each server, the blocks of {@code keys} after its GPU hit ({@code gpuMatched}, from {@link #lookup}) that
   * its offload tier holds in a row; the returned array is reused by the next call.
   */
  int[] hostLookup(PrefixKeys keys, int[] gpuMatched) {
    for (int i = 0; i < tiers.length; i++) {
      hostMatched[i] = tiers[i].blocksAfter(keys, gpuMatched[i]);
    }
    return hostMatched;
  }

  /** The request's block keys at the servers' block size. */
  PrefixKeys keys(ClientRequest request) {
    try {
      return request.request().tokenize(Prompts.TOKENIZER).keys(blockSize);
    } catch (TokenizationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Leading blocks of {@code keys} each server holds; the returned array is reused by the next call. */
  int[] lookup(PrefixKeys keys) {
    lookupIndex.lookup(keys, states, states.length, matched);
    return matched;
  }
}
