package dev.kinference.cache;

import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * One endpoint's KV-cache groups beside the one its cache index holds, and vLLM's rule for a hybrid-attention model
 * (full attention beside sliding-window or linear/Mamba layers): a prefix found in the indexed group counts as cached
 * only as far as every other group can reuse it. The one home of that rule: the gateway's KV-event subscriber and the
 * simulator's routers feed it events and ask it {@link #limit}, and {@link HybridCacheIndex} cuts hits with it.
 *
 * <p>What is implemented, following vLLM's hybrid KV-cache coordinator ({@code vllm/v1/core/kv_cache_coordinator.py}),
 * which lets each group only shorten a hit and repeats until none does:
 * <ul>
 *   <li>another full-attention group keeps the hit to the blocks it holds from the start;</li>
 *   <li>a sliding-window group of window {@code w} tokens and blocks of {@code b} tokens needs the
 *       {@code ceil((w - 1) / b)} blocks before the hit's end (or every block from the start, for a shorter hit);</li>
 *   <li>a Mamba group needs the hit's last block: vLLM's {@code MambaManager} in {@code mamba_cache_mode} align keeps
 *       states only at some block boundaries, so a hit ends at the last block whose state every Mamba group holds;</li>
 *   <li>groups of other kinds (cross, encoder-only, chunked-local attention) do not limit a hit, nor does a group
 *       whose block size differs from the prompt's (vLLM's fine-grained Mamba alignment is not modelled).</li>
 * </ul>
 * Each group is tracked under the router's own block keys ({@link BlockKeys}, recomputed from the events' tokens). A
 * group's {@code BlockStored} lists only the blocks it holds, the last ones of the span its tokens cover (vLLM skips
 * the null blocks before them); a parent the group holds no block for is keyed through the indexed group. vLLM may
 * cache a hash twice (a request whose hit a group cut short computes those blocks again) and removes each copy on its
 * own, so copies are counted, in every group and in the indexed one ({@link #indexedEvent}).
 *
 * <p>Thread-safety: safe for one thread applying an endpoint's events while others call {@link #limit}; each call
 * holds this object's monitor, uncontended but for one endpoint's events against its lookups.
 */
public final class HybridGroups {

  /** How a KV-cache group's blocks take part in a prefix-cache hit, as vLLM's hybrid coordinator decides it. */
  public enum Role {
    /** Full attention ({@code full_attention}, {@code mla_attention}, {@code sink_full_attention}): every block. */
    FULL_ATTENTION,
    /** {@code sliding_window}, {@code sliding_window_mla}: only the blocks of the last window before the hit's end. */
    SLIDING_WINDOW,
    /** {@code mamba}: only the state at the hit's last block. */
    MAMBA,
    /** Kinds that do not limit a prefix hit here (cross, encoder-only, chunked-local attention, unknown kinds). */
    OTHER,
    /** The event does not say (every {@code BlockRemoved}, and servers that do not describe their groups). */
    UNKNOWN
  }

  private final String model;
  private final List<Group> groups = new ArrayList<>(2);
  /** Extra copies of the indexed group's blocks: engine hash to the copies beyond the one the index holds. */
  private final LongCounts indexedCopies = new LongCounts(16);

  /** @param model the endpoint's model (the seed of its block keys) */
  public HybridGroups(String model) {
    this.model = java.util.Objects.requireNonNull(model, "model");
  }

  /** One tracked group. */
  private static final class Group {
    final int index;
    Role role;
    int slidingWindow;
    /** 0 until a {@code BlockStored} with tokens (or a declaration) says: a group of unknown size limits nothing. */
    int blockSize;
    final LongCounts engineToKey = new LongCounts(64);
    final LongCounts keys = new LongCounts(64);
    /** Copies of a hash beyond the first. */
    final LongCounts copies = new LongCounts(16);

    Group(int index, Role role, int slidingWindow) {
      this.index = index;
      this.role = role;
      this.slidingWindow = slidingWindow;
    }

    void clear() {
      engineToKey.clear();
      keys.clear();
      copies.clear();
    }

    boolean holds(long key) {
      return keys.get(key) != LongCounts.MISSING;
    }

    /** How far this group lets a hit of {@code hit} blocks of {@code prompt} reach. */
    int limit(PrefixKeys prompt, int hit) {
      if (blockSize != prompt.blockSize()) {
        return hit;
      }
      return switch (role) {
        case FULL_ATTENTION -> {
          int i = 0;
          while (i < hit && holds(prompt.key(i))) {
            i++;
          }
          yield i;
        }
        case SLIDING_WINDOW -> {
          int window = Math.max(1, (slidingWindow - 1 + blockSize - 1) / blockSize);
          int run = 0;
          for (int i = hit - 1; i >= 0; i--) {
            if (holds(prompt.key(i))) {
              if (++run >= window) {
                yield i + window;
              }
            } else {
              run = 0;
            }
          }
          yield run; // fewer blocks than a window, all held from the start
        }
        case MAMBA -> {
          int i = hit;
          while (i > 0 && !holds(prompt.key(i - 1))) {
            i--;
          }
          yield i;
        }
        case OTHER, UNKNOWN -> hit;
      };
    }
  }

  /**
   * Declares group {@code group} before its first event, for a model whose groups are known (the simulator's): a
   * declared group that holds nothing cuts every hit to nothing, as vLLM's would, while a group no event has
   * described yet is unknown here and limits nothing.
   *
   * @throws IllegalArgumentException if {@code role} is {@link Role#UNKNOWN}, the index or window is negative or the
   *     block size not positive
   */
  public synchronized void declare(int group, Role role, int slidingWindow, int blockSize) {
    if (role == Role.UNKNOWN || group < 0 || slidingWindow < 0 || blockSize <= 0) {
      throw new IllegalArgumentException("group " + group + ": role " + role + ", window " + slidingWindow
          + ", block size " + blockSize);
    }
    Group g = find(group);
    if (g == null) {
      g = new Group(group, role, slidingWindow);
      groups.add(g);
    }
    g.role = role;
    g.slidingWindow = slidingWindow;
    g.blockSize = blockSize;
  }

  /**
   * Applies one event of the GPU tier of group {@code group}, which is not the indexed one (or is, for want of a
   * full-attention group, and limits hits its way too). An {@code AllBlocksCleared} clears every group.
   *
   * @param role the group's role as this event describes it; {@link Role#UNKNOWN} keeps what an earlier event said
   * @param slidingWindow the window in tokens of a sliding-window group, or 0
   * @param indexedKeyOf the router key of one of the indexed group's blocks by engine hash, or null if not held
   * @return false if the event was dropped: its group was never described, so there is nothing to match it with
   */
  public synchronized boolean apply(int group, Role role, int slidingWindow, KvEvent event,
      LongFunction<@Nullable Long> indexedKeyOf) {
    if (event instanceof KvEvent.AllBlocksCleared) {
      clearGroups();
      return true;
    }
    Group g = find(group);
    if (g == null) {
      if (role == Role.UNKNOWN) {
        return false;
      }
      g = new Group(group, role, slidingWindow);
      groups.add(g);
    } else if (role != Role.UNKNOWN) {
      g.role = role;
      g.slidingWindow = slidingWindow;
    }
    switch (event) {
      case KvEvent.BlockStored s -> store(g, s, indexedKeyOf);
      case KvEvent.BlockRemoved r -> {
        for (long hash : r.blockHashes()) {
          if (g.copies.get(hash) > 0) {
            g.copies.add(hash, -1); // another copy stays
            continue;
          }
          long key = g.engineToKey.remove(hash);
          if (key != LongCounts.MISSING) {
            g.keys.add(key, -1);
          }
        }
      }
      case KvEvent.AllBlocksCleared c -> { }
    }
    return true;
  }

  /**
   * {@code event} of the indexed group as the index should see it: a {@code BlockRemoved} of a hash of which
   * another copy stays is not passed on (null if nothing is left). Only extra copies are counted here: a stored hash
   * the index already holds ({@code indexedKeyOf} answers it; ask before applying the event) is one.
   */
  public synchronized @Nullable KvEvent indexedEvent(KvEvent event, LongFunction<@Nullable Long> indexedKeyOf) {
    return switch (event) {
      case KvEvent.BlockStored s -> {
        if (s.medium() == KvEvent.Medium.GPU) {
          for (long hash : s.blockHashes()) {
            if (indexedKeyOf.apply(hash) != null) {
              indexedCopies.add(hash, 1);
            }
          }
        }
        yield event;
      }
      case KvEvent.BlockRemoved r -> withoutCopies(r);
      case KvEvent.AllBlocksCleared c -> {
        indexedCopies.clear();
        yield event;
      }
    };
  }

  private @Nullable KvEvent withoutCopies(KvEvent.BlockRemoved r) {
    if (r.medium() != KvEvent.Medium.GPU || indexedCopies.size() == 0) {
      return r;
    }
    long[] hashes = r.blockHashes();
    long[] kept = new long[hashes.length];
    int n = 0;
    for (long hash : hashes) {
      if (indexedCopies.get(hash) > 0) {
        indexedCopies.add(hash, -1);
      } else {
        kept[n++] = hash;
      }
    }
    if (n == hashes.length) {
      return r;
    }
    return n == 0 ? null : new KvEvent.BlockRemoved(java.util.Arrays.copyOf(kept, n), r.medium());
  }

  /** The index's entries for this endpoint were cleared (another group is indexed now): forget their copies. */
  public synchronized void clearIndexedCopies() {
    indexedCopies.clear();
  }

  /** The endpoint's entries were cleared (a resync, a restart): forget every group's blocks and every copy. */
  public synchronized void clear() {
    indexedCopies.clear();
    clearGroups();
  }

  /**
   * How far a hit of {@code hit} leading blocks of {@code prompt}, found in the indexed group, reaches once every
   * other group has had its say (vLLM's fixed point: each group may only shorten it).
   */
  public synchronized int limit(PrefixKeys prompt, int hit) {
    if (groups.isEmpty() || hit == 0) {
      return hit;
    }
    int current = hit;
    while (true) {
      int next = current;
      for (Group g : groups) {
        next = Math.min(next, g.limit(prompt, next));
      }
      if (next == current) {
        return current;
      }
      current = next;
    }
  }

  private void clearGroups() {
    for (Group g : groups) {
      g.clear();
    }
  }

  private @Nullable Group find(int group) {
    for (Group g : groups) {
      if (g.index == group) {
        return g;
      }
    }
    return null;
  }

  private void store(Group g, KvEvent.BlockStored s, LongFunction<@Nullable Long> indexedKeyOf) {
    if (!s.hasTokens()) {
      return;
    }
    g.blockSize = s.blockSize();
    long key;
    Long parent = s.parentBlockHash();
    if (parent == null) {
      key = BlockKeys.seed(model, s.loraName(), s.cacheSalt());
    } else {
      key = g.engineToKey.get(parent);
      if (key == LongCounts.MISSING) {
        // a Mamba group's parent is usually a block it holds no state for: its key is the indexed group's
        Long indexedKey = indexedKeyOf.apply(parent);
        if (indexedKey == null) {
          return; // its parent was missed: these blocks cannot be keyed (a resync follows the gap)
        }
        key = indexedKey;
      }
    }
    long[] hashes = s.blockHashes();
    // the tokens cover every block of the span, the hashes only the blocks the group holds: the last ones
    int spanBlocks = Math.max(hashes.length, s.tokenIds().length / s.blockSize());
    int firstHeld = spanBlocks - hashes.length;
    for (int b = 0; b < spanBlocks; b++) {
      key = BlockKeys.next(key, s.tokenIds(), b * s.blockSize(), s.blockSize());
      if (b < firstHeld) {
        continue;
      }
      long hash = hashes[b - firstHeld];
      long previous = g.engineToKey.get(hash);
      if (previous == key) {
        g.copies.add(hash, 1);
      } else {
        if (previous != LongCounts.MISSING) {
          g.keys.add(previous, -1);
        }
        g.engineToKey.put(hash, key);
        g.keys.add(key, 1);
      }
    }
  }
}
