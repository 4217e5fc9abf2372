package dev.kinference.sim.bench;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * llm-d's approximate prefix index as its {@code approx-prefix-cache-producer} keeps it today
 * ({@code llm-d/llm-d-router}, {@code pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix}): the
 * prompt's token ids hashed in a chain of 64-token blocks (the engine's block size, raised to the producer's
 * minimum {@code minBlockSizeTokens = 64}), at most {@code maxPrefixTokensToMatch = 131072} tokens, and per server an
 * LRU of block hashes whose capacity is the server's {@code num_gpu_blocks} as scraped ({@code autoTune}; 31,250
 * before the first scrape). A server's match counts the leading blocks it holds, walking the prompt's blocks while
 * any server still holds the block ({@code matchLongestPrefix}). The chosen server records the request's blocks
 * when the request is sent ({@code PreRequest}).
 *
 * <p>Not thread-safe: the fleet calls a router on one thread.
 */
final class LlmdApproxPrefixIndex {

  static final int BLOCK_TOKENS = 64;
  static final int MAX_PREFIX_TOKENS = 131_072;
  static final int DEFAULT_LRU_CAPACITY = 31_250;

  private final LruBlocks[] servers;
  private final long seed;

  LlmdApproxPrefixIndex(int servers, String model) {
    this.servers = new LruBlocks[servers];
    for (int i = 0; i < servers; i++) {
      this.servers[i] = new LruBlocks();
    }
    long h = 0xCBF29CE484222325L;
    for (byte b : model.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * 0x100000001B3L;
    }
    this.seed = h;
  }

  /** Sets a server's LRU capacity from its scraped {@code num_gpu_blocks}. */
  void capacity(int server, int numGpuBlocks) {
    if (numGpuBlocks > 0) {
      servers[server].capacity = numGpuBlocks;
    }
  }

  /** The hash chain of the prompt's full 64-token blocks, at most {@link #MAX_PREFIX_TOKENS} tokens of them. */
  long[] blocks(int[] tokens) {
    int count = Math.min(MAX_PREFIX_TOKENS, tokens.length) / BLOCK_TOKENS;
    long[] out = new long[count];
    long h = seed;
    for (int b = 0; b < count; b++) {
      for (int i = b * BLOCK_TOKENS; i < (b + 1) * BLOCK_TOKENS; i++) {
        h = (h ^ tokens[i]) * 0x100000001B3L;
      }
      h ^= h >>> 29;
      out[b] = h;
    }
    return out;
  }

  /** Blocks of {@code blocks} each server holds, counted while some server holds the block. */
  int[] match(long[] blocks) {
    int[] matched = new int[servers.length];
    for (long block : blocks) {
      boolean any = false;
      for (int s = 0; s < servers.length; s++) {
        if (servers[s].contains(block)) {
          matched[s]++;
          any = true;
        }
      }
      if (!any) {
        break;
      }
    }
    return matched;
  }

  /** Records that the request's blocks were sent to {@code server}. */
  void record(int server, long[] blocks) {
    for (long block : blocks) {
      servers[server].touch(block);
    }
  }

  /** One server's remembered blocks, least recently used evicted first. */
  private static final class LruBlocks {
    int capacity = DEFAULT_LRU_CAPACITY;
    private final LinkedHashMap<Long, Boolean> blocks = new LinkedHashMap<>(1024, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
        return size() > capacity;
      }
    };

    boolean contains(long block) {
      return blocks.containsKey(block);
    }

    void touch(long block) {
      blocks.put(block, Boolean.TRUE);
    }
  }
}
