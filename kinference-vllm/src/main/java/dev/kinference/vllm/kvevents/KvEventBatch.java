package dev.kinference.vllm.kvevents;

import dev.kinference.cache.KvEvent;
import java.util.Collections;
import java.util.List;

/**
 * One decoded {@code KVEventBatch}: the events of one engine step, in order.
 *
 * @param timestamp the publisher's wall-clock time in seconds since the epoch ({@code ts})
 * @param dataParallelRank the publishing engine's data-parallel rank, or -1 when the batch does not say
 * @param events the events, in order, of every KV-cache group and tier ({@link KvEvent.BlockStored#medium})
 * @param groups the KV-cache group of each event, same order and size as {@code events}
 * @param skippedEvents events decoded but not returned: event types this decoder does not know
 */
public record KvEventBatch(double timestamp, int dataParallelRank, List<KvEvent> events, List<KvCacheGroup> groups,
    int skippedEvents) {

  public KvEventBatch {
    events = List.copyOf(events);
    groups = List.copyOf(groups);
    if (groups.size() != events.size()) {
      throw new IllegalArgumentException(groups.size() + " groups for " + events.size() + " events");
    }
  }

  /** A batch of a server that does not describe its KV-cache groups: every event in group 0. */
  public KvEventBatch(double timestamp, int dataParallelRank, List<KvEvent> events, int skippedEvents) {
    this(timestamp, dataParallelRank, events, Collections.nCopies(events.size(), KvCacheGroup.UNDESCRIBED),
        skippedEvents);
  }

  /** Blocks named by the batch's events (stored plus removed). */
  public long blockCount() {
    long n = 0;
    for (KvEvent e : events) {
      n += blockCount(e);
    }
    return n;
  }

  static int blockCount(KvEvent e) {
    return switch (e) {
      case KvEvent.BlockStored s -> s.blockHashes().length;
      case KvEvent.BlockRemoved r -> r.blockHashes().length;
      case KvEvent.AllBlocksCleared c -> 0;
    };
  }
}
