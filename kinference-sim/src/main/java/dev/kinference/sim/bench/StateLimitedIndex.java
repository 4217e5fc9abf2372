package dev.kinference.sim.bench;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import java.util.Map;

/**
 * A {@link CacheIndex} that cuts the wrapped index's hits (the full-attention group's) to what a hybrid model's Mamba
 * groups can reuse ({@link MambaStates#limit}): the benchmark's counterpart of the gateway's
 * {@code HybridCacheIndex}. Thread-safety: as {@link MambaStates}.
 */
final class StateLimitedIndex implements CacheIndex {

  private final CacheIndex delegate;
  private final MambaStates states;
  private final Map<String, Integer> serverOf;

  StateLimitedIndex(CacheIndex delegate, MambaStates states, Map<String, Integer> serverOf) {
    this.delegate = delegate;
    this.states = states;
    this.serverOf = serverOf;
  }

  @Override
  public void lookup(PrefixKeys keys, EndpointState[] candidates, int count, int[] matchedBlocks) {
    delegate.lookup(keys, candidates, count, matchedBlocks);
    for (int i = 0; i < count; i++) {
      Integer server = serverOf.get(candidates[i].id());
      if (matchedBlocks[i] > 0 && server != null) {
        matchedBlocks[i] = states.limit(server, keys, matchedBlocks[i]);
      }
    }
  }

  @Override
  public void onRouted(EndpointState endpoint, PrefixKeys keys) {
    delegate.onRouted(endpoint, keys);
  }

  @Override
  public void onEvent(EndpointState endpoint, KvEvent event) {
    delegate.onEvent(endpoint, event);
  }

  @Override
  public long entryCount() {
    return delegate.entryCount();
  }

  @Override
  public boolean isPrecise() {
    return delegate.isPrecise();
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public int order() {
    return delegate.order();
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    delegate.onEndpointAdded(endpoint);
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    delegate.onEndpointRemoved(endpoint);
  }
}
