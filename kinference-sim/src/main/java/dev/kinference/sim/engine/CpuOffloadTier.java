package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A KV offload tier in host (CPU) memory, as vLLM's offloading connector keeps one
 * ({@code vllm/distributed/kv_transfer/kv_connector/v1/offloading/scheduler.py} with its LRU manager,
 * {@code --kv-transfer-config '{"kv_connector":"OffloadingConnector", ...}'}):
 * <ul>
 *   <li>Write-through: every full block is stored to the tier as it is computed (the connector's store jobs run
 *       after each step, while the GPU still holds the block), with the engine's block hash, so the tier holds a
 *       superset of what the GPU evicted recently. A block already there is only touched.</li>
 *   <li>The tier holds {@code capacityBlocks} blocks and evicts the least recently stored or looked-up one.</li>
 *   <li>A request's lookup continues after its GPU prefix hit: the blocks found here, in a row, are loaded to newly
 *       allocated GPU blocks before the request is scheduled (asynchronously: other requests keep running), taking
 *       the blocks' bytes over each GPU's host link.</li>
 *   <li>Events: {@code BlockStored} and {@code BlockRemoved} with {@code medium} CPU, in the self-describing form
 *       (tokens and parent hash, as with {@code self_describing_kv_events}), in the batch of the step that stored or
 *       evicted them.</li>
 * </ul>
 * Not modelled: the store's transfer time (asynchronous, off the compute path) and a finished request's blocks
 * held until its store completes.
 *
 * <p>Not thread-safe; owned by one engine.
 */
final class CpuOffloadTier {

  private static final double GIB = 1L << 30;

  private final int capacityBlocks;
  private final int blockSize;
  private final double secondsPerToken;
  private final LinkedHashMap<Long, Boolean> lru = new LinkedHashMap<>(1024, 0.75f, true);

  /**
   * @param capacityBytes host memory for the tier, summed over the server's GPUs (vLLM's {@code kv_offloading_size})
   * @param config the engine whose blocks it stores
   */
  CpuOffloadTier(long capacityBytes, EngineConfig config) {
    this.blockSize = config.blockSize();
    long blockBytes = (long) blockSize * config.model().kvBytesPerToken();
    this.capacityBlocks = (int) Math.min(Integer.MAX_VALUE - 1, capacityBytes / blockBytes);
    if (capacityBlocks < 1) {
      throw new IllegalArgumentException(String.format(Locale.ROOT,
          "a CPU offload tier of %.3f GiB holds no block of %d bytes", capacityBytes / GIB, blockBytes));
    }
    this.secondsPerToken = 1 / config.offloadReloadTokensPerSecond();
  }

  /**
   * Bytes a second one GPU moves between host and device memory for KV blocks: 80% of its PCIe x16 link, Gen4
   * (32 GB/s) for L40S and A100, Gen5 (64 GB/s) for H100 and H200. vLLM's connector copies whole blocks by DMA
   * (its blog, "Inside vLLM's New KV Offloading Connector", 2026).
   */
  static double hostLinkBytesPerSecond(GpuSpec gpu) {
    String name = gpu.name().toUpperCase(Locale.ROOT);
    boolean gen5 = name.startsWith("H100") || name.startsWith("H200") || name.startsWith("B");
    return (gen5 ? 64e9 : 32e9) * 0.8;
  }

  int capacityBlocks() {
    return capacityBlocks;
  }

  int size() {
    return lru.size();
  }

  boolean holds(long hash) {
    return lru.containsKey(hash);
  }

  /** Nanoseconds to load {@code tokens} tokens' KV to the GPU. */
  long loadNanos(int tokens) {
    return Math.max(1, Math.round(tokens * secondsPerToken * 1e9));
  }

  /**
   * How many of {@code s}'s blocks from block {@code from} on (before {@code max}) the tier holds in a row; they
   * become the most recently used, as the connector's lookup touches them.
   */
  int lookup(Sequence s, EngineHasher hasher, int from, int max) {
    int b = from;
    while (b < max && lru.get(s.blockHash(b, hasher, blockSize)) != null) {
      b++;
    }
    return b - from;
  }

  /**
   * Stores blocks {@code [first, full)} of {@code s} (hashes {@code hashes}), evicting the least recently used
   * blocks when full; one {@code BlockStored} per run of blocks that were not held yet.
   */
  void store(Sequence s, EngineHasher hasher, int first, long[] hashes, List<KvEvent> events) {
    int runStart = -1;
    for (int i = 0; i <= hashes.length; i++) {
      boolean fresh = i < hashes.length && lru.get(hashes[i]) == null;
      if (fresh && runStart < 0) {
        runStart = i;
      }
      if (!fresh && runStart >= 0) {
        publishRun(s, hasher, first, hashes, runStart, i, events);
        runStart = -1;
      }
    }
  }

  /** Forgets every block without events (a restarted server's new process). */
  void clear() {
    lru.clear();
  }

  private void publishRun(Sequence s, EngineHasher hasher, int first, long[] hashes, int from, int to,
      List<KvEvent> events) {
    for (int i = from; i < to; i++) {
      while (lru.size() >= capacityBlocks) {
        Long victim = lru.keySet().iterator().next();
        lru.remove(victim);
        events.add(new KvEvent.BlockRemoved(new long[] {victim}, KvEvent.Medium.CPU));
      }
      lru.put(hashes[i], Boolean.TRUE);
    }
    int block = first + from;
    @Nullable Long parent = block == 0 ? null : s.blockHash(block - 1, hasher, blockSize);
    int[] tokens = Arrays.copyOfRange(s.tokens, block * blockSize, (first + to) * blockSize);
    events.add(new KvEvent.BlockStored(Arrays.copyOfRange(hashes, from, to), parent, tokens, blockSize,
        s.request.lora(), KvEvent.Medium.CPU, block == 0 ? s.request.cacheSalt() : null));
  }
}
