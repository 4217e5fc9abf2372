package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.List;
import java.util.Objects;

/**
 * The KV-cache events of one engine step, as vLLM's publisher sends them: one batch per step that changed the
 * block pool, numbered from 0 since the engine (re)started.
 *
 * <p>Block hashes are the engine's own seeded 64-bit hashes (like vLLM's, unrelated to the router's
 * {@code BlockKeys}); {@code BlockStored} carries the parent hash, the new blocks' token ids, the block size, the
 * LoRA adapter name and medium {@code GPU}; each evicted block is its own {@code BlockRemoved}, as in vLLM. A model
 * with a sliding-window KV-cache group ({@link ModelSpec#kvCacheGroups}) publishes each group's blocks apart, tagged
 * with the group's index as vLLM's {@code group_idx}: 0 full attention, 1 the sliding window; a model with
 * linear-attention layers publishes its Mamba groups as 0 to 2 and full attention as 3
 * ({@link ModelSpec#fullAttentionGroup}).
 *
 * @param sequence the publisher's sequence number: 0, 1, 2, ... restarting at 0 after {@link SimEngine#restart}
 * @param timestampNanos when the step ended, in the engine's clock
 * @param events the events in the order they happened
 * @param groups each event's KV-cache group index, as long as {@code events}
 * @param fullAttentionGroup the index of the model's full-attention group
 */
public record EngineStepEvents(long sequence, long timestampNanos, List<KvEvent> events, List<Integer> groups,
    int fullAttentionGroup) {

  public EngineStepEvents {
    Objects.requireNonNull(events, "events");
    Objects.requireNonNull(groups, "groups");
    events = List.copyOf(events);
    groups = List.copyOf(groups);
    if (groups.size() != events.size()) {
      throw new IllegalArgumentException(groups.size() + " groups for " + events.size() + " events");
    }
    if (fullAttentionGroup < 0) {
      throw new IllegalArgumentException("fullAttentionGroup must not be negative: " + fullAttentionGroup);
    }
  }

  /** Events whose full-attention group is group 0. */
  public EngineStepEvents(long sequence, long timestampNanos, List<KvEvent> events, List<Integer> groups) {
    this(sequence, timestampNanos, events, groups, 0);
  }

  /** Events of group 0 only (a model with one KV-cache group). */
  public EngineStepEvents(long sequence, long timestampNanos, List<KvEvent> events) {
    this(sequence, timestampNanos, events, java.util.Collections.nCopies(events.size(), 0), 0);
  }

  /**
   * The events of the full-attention group, which in-process routers index (an {@code AllBlocksCleared} counts as
   * one); a sliding-window group's events are left out, so such a router does not apply vLLM's hybrid hit rule for
   * it (the ZMQ subscriber does), and Mamba groups' events are read apart (the benchmark's {@code MambaStates}).
   */
  public List<KvEvent> fullAttentionEvents() {
    boolean single = true;
    for (int g : groups) {
      single &= g == fullAttentionGroup;
    }
    if (single) {
      return events;
    }
    List<KvEvent> out = new java.util.ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) {
      if (groups.get(i) == fullAttentionGroup || events.get(i) instanceof KvEvent.AllBlocksCleared) {
        out.add(events.get(i));
      }
    }
    return out;
  }

  /** The KV-cache group of event {@code i}. */
  public int group(int i) {
    return groups.get(i);
  }
}
