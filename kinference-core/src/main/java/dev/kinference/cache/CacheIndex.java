package dev.kinference.cache;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.plugin.Plugin;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.request.PromptRetention;
import org.jspecify.annotations.Nullable;

/**
 * Which endpoints hold which prefix blocks.
 *
 * <p>Contract: {@link #lookup} may be called by any number of threads at once, concurrently with
 * {@link #onRouted}, {@link #onEvent} and fleet changes, and must not block for long or allocate per call. Events
 * of one endpoint arrive from one thread at a time, in order. An implementation must pass
 * {@code dev.kinference.testkit.CacheIndexContract}.
 */
public interface CacheIndex extends Plugin, FleetListener {

  /**
   * For each of the first {@code count} candidates, writes into {@code matchedBlocks[i]} how many leading blocks of
   * {@code keys} endpoint {@code candidates[i]} holds (0 to {@code keys.size()}).
   */
  void lookup(PrefixKeys keys, EndpointState[] candidates, int count, int[] matchedBlocks);

  /** The router sent a request with these keys to {@code endpoint}. Approximate indexes learn from this. */
  default void onRouted(EndpointState endpoint, PrefixKeys keys) {}

  /**
   * The router sent a request with these keys to {@code endpoint}, whose client asked that the prefix covered by
   * {@code retention} stay cached that long (null: it did not say). An approximate index may remember those blocks
   * longer than its own time-to-live; by default this is {@link #onRouted(EndpointState, PrefixKeys)}.
   */
  default void onRouted(EndpointState endpoint, PrefixKeys keys, @Nullable PromptRetention retention) {
    onRouted(endpoint, keys);
  }

  /** A KV-cache event from {@code endpoint}'s server. Precise indexes learn from this. */
  default void onEvent(EndpointState endpoint, KvEvent event) {}

  /** Number of (block, endpoint) entries held. */
  long entryCount();

  /** Whether this index learns from the servers' own events (true) or guesses from routing decisions (false). */
  boolean isPrecise();
}
