package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.BlockKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tiny model of a vLLM block pool, for tests: stores full blocks of token sequences with prefix reuse and LRU
 * eviction, emits the KV events vLLM would, and knows which router key each cached block must map to.
 */
final class FakeEnginePool {

  private final String model;
  private final int blockSize;
  private final int capacity;
  // engine hash -> router key, in LRU order (access order)
  private final LinkedHashMap<Long, Long> blocks = new LinkedHashMap<>(16, 0.75f, true);

  FakeEnginePool(String model, int blockSize, int capacity) {
    this.model = model;
    this.blockSize = blockSize;
    this.capacity = capacity;
  }

  /** Engine hashes look like vLLM's: 64 bits, half of them at or above 2^63. */
  static long engineHash(long parent, int[] tokens, int from, int size) {
    long h = parent * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
    for (int i = from; i < from + size; i++) {
      h = (h ^ tokens[i]) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    return h == 0 ? 1 : h;
  }

  /** Processes a prompt: reuses cached blocks, evicts if needed, stores the rest; returns the events. */
  List<KvEvent> process(int[] tokens) {
    List<KvEvent> events = new ArrayList<>();
    int full = tokens.length / blockSize;
    long[] hashes = new long[full];
    long[] keys = new long[full];
    long parentHash = 0;
    long parentKey = BlockKeys.seed(model, null, null);
    int firstNew = -1;
    for (int b = 0; b < full; b++) {
      hashes[b] = engineHash(parentHash, tokens, b * blockSize, blockSize);
      keys[b] = BlockKeys.next(parentKey, tokens, b * blockSize, blockSize);
      parentHash = hashes[b];
      parentKey = keys[b];
      if (firstNew < 0 && !blocks.containsKey(hashes[b])) {
        firstNew = b;
      }
      if (firstNew < 0) {
        blocks.get(hashes[b]); // touch: the request uses it, so it is not evictable now
      }
    }
    if (firstNew < 0) {
      return events;
    }
    int newCount = full - firstNew;
    List<Long> evicted = new ArrayList<>();
    var it = blocks.keySet().iterator();
    while (blocks.size() - evicted.size() + newCount > capacity && it.hasNext()) {
      long h = it.next();
      boolean inUse = false;
      for (int b = 0; b < firstNew; b++) {
        inUse |= hashes[b] == h;
      }
      if (!inUse) {
        evicted.add(h);
      }
    }
    if (!evicted.isEmpty()) {
      evicted.forEach(blocks::remove);
      events.add(new KvEvent.BlockRemoved(evicted.stream().mapToLong(Long::longValue).toArray(),
          KvEvent.Medium.GPU));
    }
    for (int b = firstNew; b < full; b++) {
      blocks.put(hashes[b], keys[b]);
    }
    events.add(new KvEvent.BlockStored(Arrays.copyOfRange(hashes, firstNew, full),
        firstNew == 0 ? null : hashes[firstNew - 1],
        Arrays.copyOfRange(tokens, firstNew * blockSize, full * blockSize), blockSize, null, KvEvent.Medium.GPU,
        null));
    return events;
  }

  void clear() {
    blocks.clear();
  }

  Map<Long, Long> contents() {
    return Map.copyOf(blocks);
  }

  /** The index holds exactly this pool's blocks for {@code endpoint}, each under its router key. */
  void assertIndexEquals(PreciseCacheIndex index, EndpointState endpoint) {
    assertThat(index.blockCount(endpoint)).isEqualTo(blocks.size());
    blocks.forEach((hash, key) -> {
      assertThat(index.routerKey(endpoint, hash)).as("engine hash %s", Long.toUnsignedString(hash)).isEqualTo(key);
      assertThat(index.holds(endpoint, key)).isTrue();
    });
  }
}
