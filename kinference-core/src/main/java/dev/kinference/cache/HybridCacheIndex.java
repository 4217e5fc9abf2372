package dev.kinference.cache;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A {@link CacheIndex} that counts a prefix of a hybrid-attention model as cached only as far as every KV-cache
 * group of the model can reuse it, as vLLM decides. It wraps the index that holds each endpoint's indexed group
 * (its first full-attention group) and asks the {@link HybridGroups} registered for each endpoint, which track the
 * other groups, how far a hit found there reaches. Endpoints without registered groups are answered by the wrapped
 * index alone.
 *
 * <p>Use it in place of the wrapped index, both for the router and for whatever feeds it events (the gateway's
 * {@code KvEventSubscriptions} registers each endpoint's groups itself). Thread-safety: as {@link CacheIndex};
 * lookups take each hybrid candidate's monitor briefly (see {@link HybridGroups}).
 */
public final class HybridCacheIndex implements CacheIndex {

  private final CacheIndex delegate;
  // by endpoint slot; replaced whole when groups are registered or unregistered (rare), read lock-free by lookups
  private volatile @Nullable Registration[] bySlot = new Registration[0];

  private record Registration(EndpointState endpoint, HybridGroups groups) {}

  private HybridCacheIndex(CacheIndex delegate) {
    this.delegate = delegate;
  }

  /** Wraps {@code index} (a precise one: the groups come from KV events). */
  public static HybridCacheIndex wrap(CacheIndex index) {
    Objects.requireNonNull(index, "index");
    if (index instanceof HybridCacheIndex h) {
      return h;
    }
    return new HybridCacheIndex(index);
  }

  /** The wrapped index. */
  public CacheIndex delegate() {
    return delegate;
  }

  /** From now on, {@code endpoint}'s hits are cut to what {@code groups} can reuse (replacing any groups before). */
  public synchronized void register(EndpointState endpoint, HybridGroups groups) {
    Objects.requireNonNull(groups, "groups");
    @Nullable Registration[] current = bySlot;
    @Nullable Registration[] next = Arrays.copyOf(current, Math.max(current.length, endpoint.slot() + 1));
    next[endpoint.slot()] = new Registration(endpoint, groups);
    bySlot = next;
  }

  /** Stops cutting {@code endpoint}'s hits, if {@code groups} are still the ones registered for it. */
  public synchronized void unregister(EndpointState endpoint, HybridGroups groups) {
    @Nullable Registration[] current = bySlot;
    int slot = endpoint.slot();
    Registration r = slot < current.length ? current[slot] : null;
    if (r != null && r.groups() == groups) {
      @Nullable Registration[] next = current.clone();
      next[slot] = null;
      bySlot = next;
    }
  }

  @Override
  public void lookup(PrefixKeys keys, EndpointState[] candidates, int count, int[] matchedBlocks) {
    delegate.lookup(keys, candidates, count, matchedBlocks);
    @Nullable Registration[] registrations = bySlot;
    for (int i = 0; i < count; i++) {
      int slot = candidates[i].slot();
      if (matchedBlocks[i] > 0 && slot < registrations.length) {
        Registration r = registrations[slot];
        if (r != null && r.endpoint() == candidates[i]) {
          matchedBlocks[i] = r.groups().limit(keys, matchedBlocks[i]);
          if (delegate.isPrecise()) {
            // a prompt still queued there has no events in the other groups yet: the cut would always take its
            // credit away (PreciseCacheIndex), though vLLM computes every group of it before a request behind it runs
            matchedBlocks[i] = candidates[i].promptsAwaitingFirstToken().credited(matchedBlocks[i], keys);
          }
        }
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
