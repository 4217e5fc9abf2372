package dev.kinference.vllm.kvevents;

import dev.kinference.cache.KvEvent;
import java.util.List;

/**
 * One decoded {@code KVEventBatch}: the events of one engine step, in order.
 *
 * @param timestamp the publisher's wall-clock time in seconds since the epoch ({@code ts})
 * @param dataParallelRank the publishing engine's data-parallel rank, or -1 when the batch does not say
 * @param events the events to apply, in order
 * @param skippedEvents events decoded but not returned: unknown event types, KV-cache groups other than the
 *     primary one (hybrid models)
 */
public record KvEventBatch(double timestamp, int dataParallelRank, List<KvEvent> events, int skippedEvents) {

  public KvEventBatch {
    events = List.copyOf(events);
  }

  /** Blocks named by the batch's events (stored plus removed). */
  public long blockCount() {
    long n = 0;
    for (KvEvent e : events) {
      n += switch (e) {
        case KvEvent.BlockStored s -> s.blockHashes().length;
        case KvEvent.BlockRemoved r -> r.blockHashes().length;
        case KvEvent.AllBlocksCleared c -> 0;
      };
    }
    return n;
  }
}
