package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link EngineBlockMap} against a model of the engine's block tree (hash -> parent) built from {@link HashMap}s:
 * random stores and removes, through growth and shrinking.
 */
class EngineBlockMapTest {

  private static final long ROOT = Long.MIN_VALUE;

  /** The model: which blocks are held, each one's parent, and whether a removal ever orphaned a held child. */
  private static final class Model {
    final Map<Long, Long> keys = new HashMap<>();
    final Map<Long, Long> parents = new HashMap<>();
    final Map<Long, Integer> children = new HashMap<>();
    final List<Long> held = new ArrayList<>();
    final Map<Long, Integer> heldAt = new HashMap<>();
    boolean broken;

    void store(long hash, long key, long parent) {
      keys.put(hash, key);
      parents.put(hash, parent);
      children.merge(parent, 1, Integer::sum);
      heldAt.put(hash, held.size());
      held.add(hash);
    }

    void remove(long hash) {
      keys.remove(hash);
      children.merge(parents.remove(hash), -1, Integer::sum);
      int at = heldAt.remove(hash);
      long last = held.remove(held.size() - 1);
      if (last != hash) {
        held.set(at, last);
        heldAt.put(last, at);
      }
      broken |= children.getOrDefault(hash, 0) > 0;
    }

    void clear() {
      keys.clear();
      parents.clear();
      children.clear();
      held.clear();
      heldAt.clear();
      broken = false;
    }
  }

  /** Stores {@code hash} under {@code parent} (or as a root) in both, as the precise index does. */
  private static void store(EngineBlockMap map, Model model, long hash, long key, long parent) {
    int parentAt = parent == ROOT ? -1 : map.find(parent);
    assertThat(map.find(hash)).isNegative();
    map.insert(hash, key, parentAt, parent);
    model.store(hash, key, parent);
  }

  @Test
  void matchesTheModelUnderRandomStoresAndRemoves() {
    SplittableRandom r = new SplittableRandom(3);
    EngineBlockMap map = new EngineBlockMap(4);
    Model model = new Model();
    for (int op = 0; op < 200_000; op++) {
      // Sequential-ish hashes (as some engines hash), including 0, within a range that makes operations collide.
      long hash = op < 100_000 ? r.nextInt(20_000) : r.nextInt(500);
      boolean present = model.keys.containsKey(hash);
      if (r.nextInt(3) == 0 && !present) {
        long parent = model.held.isEmpty() || r.nextInt(4) == 0 ? ROOT : model.held.get(r.nextInt(model.held.size()));
        store(map, model, hash, 1 + r.nextInt(1 << 30), parent);
      } else if (r.nextBoolean()) {
        assertThat(map.remove(hash)).isEqualTo(model.keys.getOrDefault(hash, EngineBlockMap.MISSING));
        if (present) {
          model.remove(hash);
        }
      } else {
        assertThat(map.get(hash)).isEqualTo(model.keys.getOrDefault(hash, EngineBlockMap.MISSING));
      }
      // Never claims a prefix closure it does not have.
      if (model.broken) {
        assertThat(map.prefixClosed()).as("after op %d", op).isFalse();
      }
      if (op % 256 == 0) {
        assertThat(map.size()).isEqualTo(model.keys.size());
      }
      if (op % 20_000 == 0) {
        map.clear();
        model.clear();
        assertThat(map.prefixClosed()).isTrue();
      }
    }
    assertThat(map.size()).isEqualTo(model.keys.size());
    Map<Long, Long> seen = new HashMap<>();
    map.forEach(seen::put);
    assertThat(seen).isEqualTo(model.keys);
  }

  @Test
  void chainsFreedTailFirstStayPrefixClosed() {
    SplittableRandom r = new SplittableRandom(5);
    EngineBlockMap map = new EngineBlockMap(16);
    Model model = new Model();
    // Requests sharing four prefixes, each a chain of blocks under its prefix; evicted whole, tail first, as vLLM's
    // free queue does, through growth and shrinking.
    long next = 1;
    List<List<Long>> chains = new ArrayList<>();
    long[] prefixes = new long[4];
    for (int p = 0; p < prefixes.length; p++) {
      prefixes[p] = next++;
      store(map, model, prefixes[p], next, ROOT);
    }
    for (int round = 0; round < 50_000; round++) {
      if (chains.size() < 2_000 || r.nextBoolean()) {
        List<Long> chain = new ArrayList<>();
        long parent = prefixes[r.nextInt(prefixes.length)];
        for (int b = 0, n = 1 + r.nextInt(40); b < n; b++) {
          long hash = next++ * 0x9E3779B97F4A7C15L;
          store(map, model, hash, next, parent);
          chain.add(hash);
          parent = hash;
        }
        chains.add(chain);
      } else {
        List<Long> chain = chains.remove(r.nextInt(chains.size()));
        for (int b = chain.size() - 1; b >= 0; b--) {
          assertThat(map.remove(chain.get(b))).isNotEqualTo(EngineBlockMap.MISSING);
          model.remove(chain.get(b));
        }
      }
    }
    assertThat(model.broken).isFalse();
    assertThat(map.prefixClosed()).isTrue();
    assertThat(map.size()).isEqualTo(model.keys.size());
  }

  /**
   * A map grows on the insert that needs room, which moves every entry: the parent index the caller found before that
   * insert is stale, and the child must still be counted at its parent (found again by hash), or removing the parent
   * first would not break prefix closure and removing the child first would.
   */
  @Test
  void anInsertThatGrowsTheMapStillCountsTheChildAtItsParent() {
    for (boolean parentFirst : new boolean[] {true, false}) {
      EngineBlockMap map = new EngineBlockMap(0); // 16 entries: the 13th insert grows it
      long parent = 0x9E3779B97F4A7C15L;
      map.insert(parent, 1, -1, 0);
      for (long k = 2; k <= 12; k++) {
        map.insert(k * 0x9E3779B97F4A7C15L, k, -1, 0);
      }
      int staleParentAt = map.find(parent);
      long bytes = map.arrayBytes();
      long child = 0x5DEECE66DL; // any hash distinct from the others
      map.insert(child, 99, staleParentAt, parent);
      assertThat(map.arrayBytes()).as("this insert grew the map").isGreaterThan(bytes);
      if (parentFirst) {
        map.remove(parent);
        assertThat(map.prefixClosed()).as("the child lost its counted parent").isFalse();
      } else {
        map.remove(child);
        map.remove(parent);
        assertThat(map.prefixClosed()).as("the child was uncounted at its parent").isTrue();
      }
      assertThat(map.get(child)).isEqualTo(parentFirst ? 99 : EngineBlockMap.MISSING);
    }
  }

  @Test
  void removingABlockBeforeItsChildBreaksPrefixClosureUntilCleared() {
    EngineBlockMap map = new EngineBlockMap(16);
    Model model = new Model();
    store(map, model, 11, 1, ROOT);
    store(map, model, 12, 2, 11);
    store(map, model, 13, 3, 12);
    map.remove(13);
    assertThat(map.prefixClosed()).isTrue();
    map.remove(11);
    assertThat(map.prefixClosed()).as("12 is held without its parent").isFalse();
    map.remove(12);
    assertThat(map.prefixClosed()).as("sticky until cleared").isFalse();
    map.clear();
    assertThat(map.prefixClosed()).isTrue();
    assertThat(map.size()).isZero();
  }

  @Test
  void staysCompactAsItGrowsAndShrinks() {
    EngineBlockMap map = new EngineBlockMap(16);
    for (long k = 1; k <= 1_000_000; k++) {
      map.insert(k * 31, k, -1, 0);
      if (k >= 1_000 && k % 997 == 0) {
        // between 24 / 0.75 and 24 / 0.6 bytes per entry, whatever the size: it grows by a quarter
        assertThat(map.arrayBytes() / (double) map.size()).isBetween(32.0, 40.2);
      }
    }
    for (long k = 1; k <= 990_000; k++) {
      map.remove(k * 31);
    }
    assertThat(map.size()).isEqualTo(10_000);
    assertThat(map.arrayBytes() / (double) map.size()).isLessThanOrEqualTo(24 * 4.0);
    assertThat(map.get(999_999L * 31)).isEqualTo(999_999L);
    assertThat(map.prefixClosed()).isTrue();
  }
}
