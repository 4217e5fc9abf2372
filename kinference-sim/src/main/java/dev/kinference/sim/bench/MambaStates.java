package dev.kinference.sim.bench;

import dev.kinference.cache.KvEvent;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineStepEvents;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The states each server's Mamba KV-cache groups hold, from their KV events, and vLLM's hybrid hit rule over them:
 * a prefix found in the full-attention group counts only up to its last block whose state every Mamba group holds
 * ({@code MambaManager.find_longest_cache_hit} in {@code mamba_cache_mode} align). The benchmark's precise routers
 * index the full-attention group and ask this for the limit, as the gateway's KV-event subscriber does with its
 * {@code KvCacheGroups}.
 *
 * <p>A Mamba group's {@code BlockStored} covers the same tokens as the full-attention group's but lists only the blocks
 * holding a state, the last ones of the span (vLLM skips the null blocks before them); keys are computed from the
 * tokens, from the parent's key in the full-attention index or in this group. Not thread-safe: the benchmark's event
 * thread and its routing run on one thread.
 */
final class MambaStates {

  private final String model;
  private final int groups;
  // [server][group]
  private final Group[][] byServer;
  // [server]: engine hash of the full-attention group to its copies beyond the one indexed
  private final Map<Long, Integer>[] copies;

  /** One Mamba group of one server: engine hash to router key, and router key to the blocks holding it. */
  private static final class Group {
    final Map<Long, Long> keyOf = new HashMap<>();
    final Map<Long, Integer> held = new HashMap<>();
  }

  MambaStates(String model, int servers, int groups) {
    this.model = model;
    this.groups = groups;
    this.byServer = new Group[servers][groups];
    @SuppressWarnings({"unchecked", "rawtypes"})
    Map<Long, Integer>[] c = new Map[servers];
    this.copies = c;
    for (int s = 0; s < servers; s++) {
      copies[s] = new HashMap<>();
    }
    for (int s = 0; s < servers; s++) {
      for (int g = 0; g < groups; g++) {
        byServer[s][g] = new Group();
      }
    }
  }

  /** The benchmark's Mamba groups for a fleet of this model, or null if its model has none. */
  static @Nullable MambaStates of(String model, int servers, int mambaGroups) {
    return mambaGroups > 0 ? new MambaStates(model, servers, mambaGroups) : null;
  }

  /**
   * Applies the Mamba groups' events of {@code batch} for {@code server}; {@code fullKeyOf} maps an engine hash to
   * its router key in the full-attention index (null if not held).
   */
  void apply(int server, EngineStepEvents batch, LongFunction<@Nullable Long> fullKeyOf) {
    List<KvEvent> events = batch.events();
    for (int i = 0; i < events.size(); i++) {
      int g = batch.group(i);
      KvEvent e = events.get(i);
      if (e instanceof KvEvent.AllBlocksCleared) {
        for (int k = 0; k < groups; k++) {
          byServer[server][k].keyOf.clear();
          byServer[server][k].held.clear();
        }
        continue;
      }
      if (g == batch.fullAttentionGroup() || g >= groups) {
        continue;
      }
      switch (e) {
        case KvEvent.BlockStored s -> {
          if (s.medium() == KvEvent.Medium.GPU) {
            store(server, g, s, fullKeyOf);
          }
        }
        case KvEvent.BlockRemoved r -> {
          if (r.medium() == KvEvent.Medium.GPU) {
            for (long hash : r.blockHashes()) {
              Long key = byServer[server][g].keyOf.remove(hash);
              if (key != null) {
                byServer[server][g].held.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
              }
            }
          }
        }
        case KvEvent.AllBlocksCleared c -> { }
      }
    }
  }

  private void store(int server, int g, KvEvent.BlockStored s, LongFunction<@Nullable Long> fullKeyOf) {
    if (!s.hasTokens() || s.blockHashes().length == 0) {
      return;
    }
    Long parent = s.parentBlockHash();
    Long key;
    if (parent == null) {
      key = BlockKeys.seed(model, s.loraName(), s.cacheSalt());
    } else {
      key = byServer[server][g].keyOf.get(parent);
      if (key == null) {
        key = fullKeyOf.apply(parent);
      }
      if (key == null) {
        return; // the parent's key is unknown: these states cannot be keyed
      }
    }
    int spanBlocks = s.tokenIds().length / s.blockSize();
    long[] hashes = s.blockHashes();
    int firstHashed = spanBlocks - hashes.length;
    long k = key;
    for (int b = 0; b < spanBlocks; b++) {
      k = BlockKeys.next(k, s.tokenIds(), b * s.blockSize(), s.blockSize());
      if (b >= firstHashed) {
        long hash = hashes[b - firstHashed];
        Long previous = byServer[server][g].keyOf.put(hash, k);
        if (previous == null || previous != k) {
          if (previous != null) {
            byServer[server][g].held.computeIfPresent(previous, (x, n) -> n > 1 ? n - 1 : null);
          }
          byServer[server][g].held.merge(k, 1, Integer::sum);
        }
      }
    }
  }

  /**
   * A full-attention event of {@code server} as the index should see it: vLLM caches a hash again when a request
   * whose hit the Mamba groups cut short recomputes blocks full attention still holds, and removes each copy on its
   * own, so the {@code BlockRemoved} of a copy while another stays is not passed on (null if nothing is left).
   * {@code fullKeyOf} says whether the index holds a hash already.
   */
  @Nullable KvEvent withoutCopies(int server, KvEvent event, LongFunction<@Nullable Long> fullKeyOf) {
    Map<Long, Integer> extra = copies[server];
    return switch (event) {
      case KvEvent.BlockStored s -> {
        if (s.medium() == KvEvent.Medium.GPU) {
          for (long hash : s.blockHashes()) {
            if (fullKeyOf.apply(hash) != null) {
              extra.merge(hash, 1, Integer::sum);
            }
          }
        }
        yield event;
      }
      case KvEvent.BlockRemoved r -> withoutCopies(extra, r);
      case KvEvent.AllBlocksCleared c -> {
        extra.clear();
        yield event;
      }
    };
  }

  private static @Nullable KvEvent withoutCopies(Map<Long, Integer> extra, KvEvent.BlockRemoved r) {
    if (r.medium() != KvEvent.Medium.GPU || extra.isEmpty()) {
      return r;
    }
    long[] hashes = r.blockHashes();
    long[] kept = new long[hashes.length];
    int n = 0;
    for (long hash : hashes) {
      Integer c = extra.get(hash);
      if (c == null) {
        kept[n++] = hash;
      } else if (c > 1) {
        extra.put(hash, c - 1);
      } else {
        extra.remove(hash);
      }
    }
    if (n == hashes.length) {
      return r;
    }
    return n == 0 ? null : new KvEvent.BlockRemoved(java.util.Arrays.copyOf(kept, n), r.medium());
  }

  /** How far a hit of {@code hit} leading blocks of {@code keys} on {@code server} reaches: its last held state. */
  int limit(int server, PrefixKeys keys, int hit) {
    for (int i = hit; i > 0; i--) {
      long key = keys.key(i - 1);
      boolean all = true;
      for (int g = 0; g < groups && all; g++) {
        all = byServer[server][g].held.containsKey(key);
      }
      if (all) {
        return i;
      }
    }
    return 0;
  }
}
