package dev.kinference.vllm.kvevents;

import dev.kinference.cache.HybridGroups;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The KV-cache group an event belongs to. Hybrid models (full attention beside sliding-window or linear/Mamba
 * layers) keep one group per kind of layer, and vLLM publishes each group's blocks separately, tagging events with
 * {@code group_idx} and, on {@code BlockStored}, {@code kv_cache_spec_kind} and {@code kv_cache_spec_sliding_window}
 * (see {@code vllm/distributed/kv_events.py}; older servers send none of these: {@link #UNDESCRIBED}).
 *
 * @param index vLLM's {@code group_idx} (0 when absent)
 * @param kind vLLM's {@code KVCacheSpecKind} value, such as {@code full_attention}, {@code sliding_window} or
 *     {@code mamba}; null when the event does not say (every {@code BlockRemoved}, and older servers)
 * @param slidingWindow the window in tokens of a sliding-window group, or 0
 */
public record KvCacheGroup(int index, @Nullable String kind, int slidingWindow) {

  /** Group 0 of a server that does not describe its groups. */
  public static final KvCacheGroup UNDESCRIBED = new KvCacheGroup(0, null, 0);

  public KvCacheGroup {
    if (index < 0) {
      throw new IllegalArgumentException("group index must not be negative: " + index);
    }
    if (slidingWindow < 0) {
      throw new IllegalArgumentException("sliding window must not be negative: " + slidingWindow);
    }
  }

  /** This group's role in a prefix hit, from its kind ({@link HybridGroups} applies it). */
  public HybridGroups.Role role() {
    String k = kind;
    if (k == null) {
      return HybridGroups.Role.UNKNOWN;
    }
    return switch (k) {
      case "full_attention", "mla_attention", "sink_full_attention" -> HybridGroups.Role.FULL_ATTENTION;
      case "sliding_window", "sliding_window_mla" -> HybridGroups.Role.SLIDING_WINDOW;
      case "mamba" -> HybridGroups.Role.MAMBA;
      default -> HybridGroups.Role.OTHER;
    };
  }

  /** Whether this is the same group and description as {@code (index, kind, slidingWindow)}. */
  boolean is(int index, @Nullable String kind, int slidingWindow) {
    return this.index == index && Objects.equals(this.kind, kind) && this.slidingWindow == slidingWindow;
  }
}
