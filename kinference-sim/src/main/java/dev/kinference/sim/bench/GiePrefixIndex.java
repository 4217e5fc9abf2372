package dev.kinference.sim.bench;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Gateway API Inference Extension's first prefix plugin, as llm-d's published precise-prefix benchmark ran it
 * for its "estimated-scheduling" row ({@code hashBlockSize: 64}, {@code maxPrefixBlocksToMatch: 256},
 * {@code lruCapacityPerServer: 31250}): the prompt text in blocks of 64 characters, a hash chain seeded with the
 * model name, at most 256 blocks (the first 16,384 characters), each server's blocks remembered in an LRU of 31,250
 * when a request is routed there. Not thread-safe: one router's decisions are sequential.
 */
final class GiePrefixIndex {

  static final int CHARS_PER_BLOCK = 64;
  static final int MAX_BLOCKS = 256;
  static final int LRU_CAPACITY = 31_250;

  private final LruBlocks[] servers;
  private final long seed;

  GiePrefixIndex(int servers, String model) {
    this.servers = new LruBlocks[servers];
    for (int i = 0; i < servers; i++) {
      this.servers[i] = new LruBlocks(LRU_CAPACITY);
    }
    long h = 0xCBF29CE484222325L;
    for (byte b : model.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * 0x100000001B3L;
    }
    this.seed = h;
  }

  /** The hash chain of the text's full 64-character blocks, at most 256 of them. */
  long[] blocks(String text) {
    int count = Math.min(MAX_BLOCKS, text.length() / CHARS_PER_BLOCK);
    long[] out = new long[count];
    long h = seed;
    for (int b = 0; b < count; b++) {
      for (int i = b * CHARS_PER_BLOCK; i < (b + 1) * CHARS_PER_BLOCK; i++) {
        h = (h ^ text.charAt(i)) * 0x100000001B3L;
      }
      h ^= h >>> 29;
      out[b] = h;
    }
    return out;
  }

  /** Leading blocks each server holds. */
  int[] match(long[] blocks) {
    int[] out = new int[servers.length];
    for (int s = 0; s < servers.length; s++) {
      out[s] = servers[s].leadingMatch(blocks);
    }
    return out;
  }

  /** The request went to {@code server}: it is assumed to hold these blocks now. */
  void record(int server, long[] blocks) {
    servers[server].addAll(blocks);
  }

  /** One server's remembered blocks, least recently used evicted first. */
  private static final class LruBlocks {
    private final LinkedHashMap<Long, Boolean> blocks;

    LruBlocks(int capacity) {
      this.blocks = new LinkedHashMap<>(1024, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > capacity;
        }
      };
    }

    int leadingMatch(long[] keys) {
      int i = 0;
      while (i < keys.length && blocks.containsKey(keys[i])) {
        i++;
      }
      return i;
    }

    void addAll(long[] keys) {
      for (int i = keys.length - 1; i >= 0; i--) {
        blocks.put(keys[i], Boolean.TRUE);
      }
    }
  }
}
