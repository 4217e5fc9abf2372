package dev.kinference.sim.bench;

import dev.kinference.cache.KvEvent;
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
 * the policies using it are the comparison routers' own).
 */
final class EventPrefixIndex {

  private final PreciseCacheIndex index = new PreciseCacheIndex();
  private final EndpointState[] states;
  private final int[] matched;
  private final int blockSize;

  EventPrefixIndex(FleetView view, int blockSize) {
    Fleet fleet = Fleet.of(view.endpoints());
    fleet.addListener(index);
    this.states = new EndpointState[view.size()];
    for (int i = 0; i < states.length; i++) {
      states[i] = java.util.Objects.requireNonNull(fleet.get(view.endpoints().get(i).id()));
    }
    this.matched = new int[states.length];
    this.blockSize = blockSize;
  }

  void apply(int server, EngineStepEvents batch) {
    for (KvEvent e : batch.events()) {
      index.onEvent(states[server], e);
    }
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
    index.lookup(keys, states, states.length, matched);
    return matched;
  }
}
