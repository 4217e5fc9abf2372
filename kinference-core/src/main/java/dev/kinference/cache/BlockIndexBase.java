package dev.kinference.cache;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;

/**
 * The lookup both built-in indexes share: candidate slots as a bitset, resolved through the {@link BlockTable} by
 * bisection for endpoints whose blocks are prefix-closed (every held block's parent held too) and by a walk over
 * every block for the others and for short prompts.
 */
abstract class BlockIndexBase implements CacheIndex {

  /** Per-thread scratch, so lookups allocate nothing once warmed up. */
  private static final class Scratch {
    long[] active = new long[1];
    long[] walked = new long[1];
    long[] held = new long[1];
    int[] depthBySlot = new int[64];
    final BlockTable.WalkScratch walk = new BlockTable.WalkScratch();
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  final BlockTable table = new BlockTable();

  @Override
  public void lookup(PrefixKeys keys, EndpointState[] candidates, int count, int[] matchedBlocks) {
    if (count == 0) {
      return;
    }
    Scratch s = SCRATCH.get();
    int maxSlot = 0;
    for (int i = 0; i < count; i++) {
      maxSlot = Math.max(maxSlot, candidates[i].slot());
    }
    int words = (maxSlot >>> 6) + 1;
    if (s.active.length != words) {
      s.active = new long[words];
      s.walked = new long[words];
      s.held = new long[words];
    }
    if (s.depthBySlot.length <= maxSlot) {
      s.depthBySlot = new int[Math.max(maxSlot + 1, s.depthBySlot.length * 2)];
    }
    long[] active = s.active;
    long[] walked = s.walked;
    Arrays.fill(active, 0);
    boolean walk = false;
    boolean shortPrompt = keys.size() <= BlockTable.WALK_AT_MOST;
    for (int i = 0; i < count; i++) {
      int slot = candidates[i].slot();
      if (!shortPrompt && prefixClosed(candidates[i])) {
        active[slot >>> 6] |= 1L << slot;
      } else {
        walked[slot >>> 6] |= 1L << slot;
        walk = true;
      }
      s.depthBySlot[slot] = 0;
    }
    beforeLookup(candidates, count);
    if (walk) {
      table.walk(keys, walked, s.held, s.depthBySlot, s.walk);
    }
    table.bisect(keys, active, s.depthBySlot, s.walk);
    for (int i = 0; i < count; i++) {
      matchedBlocks[i] = s.depthBySlot[candidates[i].slot()];
    }
  }

  /**
   * Whether every block {@code endpoint} holds has its parent held too, so that the blocks of a prompt it holds are
   * a prefix of the prompt and bisection finds where they end. Read on every lookup: must be cheap.
   */
  abstract boolean prefixClosed(EndpointState endpoint);

  /** Hook for maintenance that must precede a lookup (expiry). */
  void beforeLookup(EndpointState[] candidates, int count) {}

  /** Whether the table says {@code endpoint} holds {@code key}; for tests and diagnostics. */
  public boolean holds(EndpointState endpoint, long key) {
    return table.contains(key, endpoint.slot());
  }

  /** Distinct block keys held by at least one endpoint. */
  public long distinctBlocks() {
    return table.keyCount();
  }
}
