package dev.kinference.cache;

import dev.kinference.endpoint.OffloadTier;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.HashMap;
import java.util.Objects;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * One endpoint's slower KV tier (vLLM's offloading connector: blocks kept in host memory, events with
 * {@code medium: "CPU"}), keyed by the router's own block keys, so a prompt's prefix found there can be credited
 * at its reload cost rather than as a GPU hit or as recomputation.
 *
 * <p>Keys come from the events: a {@code BlockStored} that carries its tokens (vLLM's self-describing offload
 * events) is keyed through its parent, as the GPU index does; one without tokens (vLLM's placeholder form) is keyed
 * by looking its engine hash up among the endpoint's GPU blocks (offloading stores a block as soon as it is
 * computed, while the GPU still holds it, with the same hash). Blocks that cannot be keyed are counted, not
 * credited. {@code BlockRemoved} is reference-counted per engine hash: vLLM may announce a hash more than once.
 *
 * <p>A plain map under this object's monitor (events of one endpoint against its lookups, uncontended in
 * practice), not the lock-free table of the GPU index: a tier is looked up only after a GPU hit stopped short, and
 * only for endpoints that have one. Thread-safe.
 */
public final class OffloadedPrefixes implements OffloadTier {

  /**
   * Default reload speed, 200,000 tokens/s: an 8B-class model (128-144 KiB of BF16 KV a token) over a PCIe Gen5
   * x16 link moving 25-30 GB/s, as vLLM's offloading connector's DMA copies reach; within a factor of two for
   * 27B-70B models on one or four GPUs (less KV a token per GPU, the same link per GPU).
   */
  public static final double DEFAULT_RELOAD_TOKENS_PER_SECOND = 200_000;

  private final String model;
  private final double reloadTokensPerSecond;
  private final HashMap<Long, Long> keyOfHash = new HashMap<>();
  private final HashMap<Long, Integer> announcements = new HashMap<>();
  private final HashMap<Long, Integer> holdersOfKey = new HashMap<>();
  private long unkeyedBlocks;

  /**
   * @param model the endpoint's model (the seed of its block keys)
   * @param reloadTokensPerSecond how fast the endpoint loads offloaded KV back to the GPU, in prompt tokens a second
   */
  public OffloadedPrefixes(String model, double reloadTokensPerSecond) {
    this.model = Objects.requireNonNull(model, "model");
    if (!(reloadTokensPerSecond > 0) || Double.isInfinite(reloadTokensPerSecond)) {
      throw new IllegalArgumentException("reloadTokensPerSecond must be positive and finite: "
          + reloadTokensPerSecond);
    }
    this.reloadTokensPerSecond = reloadTokensPerSecond;
  }

  /** Prompt tokens a second this tier loads back to the GPU. */
  public double reloadTokensPerSecond() {
    return reloadTokensPerSecond;
  }

  @Override
  public double reloadSeconds(int tokens) {
    return tokens <= 0 ? 0 : tokens / reloadTokensPerSecond;
  }

  /**
   * Applies one event of this tier (events of other tiers are ignored).
   *
   * @param gpuKeyOf the router key of one of the endpoint's GPU blocks by engine hash, or null if not held
   */
  public synchronized void onEvent(KvEvent event, LongFunction<@Nullable Long> gpuKeyOf) {
    switch (event) {
      case KvEvent.BlockStored s -> {
        if (s.medium() != KvEvent.Medium.GPU) {
          store(s, gpuKeyOf);
        }
      }
      case KvEvent.BlockRemoved r -> {
        if (r.medium() != KvEvent.Medium.GPU) {
          for (long hash : r.blockHashes()) {
            remove(hash);
          }
        }
      }
      case KvEvent.AllBlocksCleared c -> clear();
    }
  }

  /** Forgets every block (a restart or resync of the endpoint's events). */
  public synchronized void clear() {
    keyOfHash.clear();
    announcements.clear();
    holdersOfKey.clear();
  }

  /**
   * How many blocks of {@code keys} from block {@code from} on (the end of the GPU hit) this tier holds, in a row.
   */
  @Override
  public synchronized int blocksAfter(PrefixKeys keys, int from) {
    int i = Math.max(0, from);
    while (i < keys.size() && holdersOfKey.containsKey(keys.key(i))) {
      i++;
    }
    return i - Math.max(0, from);
  }

  /** Distinct blocks held and keyed. */
  public synchronized int blockCount() {
    return holdersOfKey.size();
  }

  /** Stored blocks that could not be keyed (no tokens and no GPU block of that hash), since the start. */
  public synchronized long unkeyedBlocks() {
    return unkeyedBlocks;
  }

  private void store(KvEvent.BlockStored s, LongFunction<@Nullable Long> gpuKeyOf) {
    long[] hashes = s.blockHashes();
    if (s.hasTokens() && hashes.length > 0) {
      Long parent = s.parentBlockHash();
      Long key = parent == null ? Long.valueOf(BlockKeys.seed(model, s.loraName(), s.cacheSalt()))
          : keyOf(parent, gpuKeyOf);
      if (key != null) {
        long k = key;
        for (int i = 0; i < hashes.length; i++) {
          k = BlockKeys.next(k, s.tokenIds(), i * s.blockSize(), s.blockSize());
          add(hashes[i], k);
        }
        return;
      }
    }
    for (long hash : hashes) {
      Long key = keyOf(hash, gpuKeyOf);
      if (key == null) {
        unkeyedBlocks++;
      } else {
        add(hash, key);
      }
    }
  }

  private @Nullable Long keyOf(long hash, LongFunction<@Nullable Long> gpuKeyOf) {
    Long own = keyOfHash.get(hash);
    return own != null ? own : gpuKeyOf.apply(hash);
  }

  private void add(long hash, long key) {
    Long previous = keyOfHash.put(hash, key);
    if (previous != null && previous != key) {
      release(previous);
    }
    if (previous == null || previous != key) {
      holdersOfKey.merge(key, 1, Integer::sum);
    }
    announcements.merge(hash, 1, Integer::sum);
  }

  private void remove(long hash) {
    Integer n = announcements.get(hash);
    if (n == null) {
      return;
    }
    if (n > 1) {
      announcements.put(hash, n - 1);
      return;
    }
    announcements.remove(hash);
    Long key = keyOfHash.remove(hash);
    if (key != null) {
      release(key);
    }
  }

  private void release(long key) {
    holdersOfKey.computeIfPresent(key, (k, v) -> v > 1 ? v - 1 : null);
  }
}
