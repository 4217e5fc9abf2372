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
 * LoRA adapter name and medium {@code GPU}; each evicted block is its own {@code BlockRemoved}, as in vLLM.
 *
 * @param sequence the publisher's sequence number: 0, 1, 2, ... restarting at 0 after {@link SimEngine#restart}
 * @param timestampNanos when the step ended, in the engine's clock
 * @param events the events in the order they happened
 */
public record EngineStepEvents(long sequence, long timestampNanos, List<KvEvent> events) {

  public EngineStepEvents {
    Objects.requireNonNull(events, "events");
    events = List.copyOf(events);
  }
}
