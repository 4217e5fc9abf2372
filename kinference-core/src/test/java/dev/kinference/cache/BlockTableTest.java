package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link BlockTable} against a plain map model: random adds, removes, slot clears and walks. */
class BlockTableTest {

  private static long key(SplittableRandom r, int distinct) {
    // Few distinct keys, so that adds and removes collide; full 64-bit spread, never 0.
    long k = r.nextInt(distinct) * 0x9E3779B97F4A7C15L;
    return k == 0 ? 1 : k;
  }

  /** Every slot below {@code slots}, as the bitset lookups take. */
  private static long[] allSlots(int slots) {
    long[] active = new long[((slots - 1) >>> 6) + 1];
    for (int s = 0; s < slots; s++) {
      active[s >>> 6] |= 1L << s;
    }
    return active;
  }

  private static int[] walkAll(BlockTable table, long[] keys, int slots) {
    long[] active = allSlots(slots);
    int[] depth = new int[slots];
    table.walk(PrefixKeys.ofKeys(keys, 16, keys.length * 16), active, new long[active.length], depth,
        new BlockTable.WalkScratch());
    return depth;
  }

  private static int[] bisectAll(BlockTable table, long[] keys, int slots) {
    long[] active = allSlots(slots);
    int[] depth = new int[slots];
    table.bisect(PrefixKeys.ofKeys(keys, 16, keys.length * 16), active, depth, new BlockTable.WalkScratch());
    assertThat(active).as("candidates cleared").containsOnly(0L);
    return depth;
  }

  private static int[] walkModel(Map<Long, BitSet> model, long[] keys, int slots) {
    int[] depth = new int[slots];
    for (int s = 0; s < slots; s++) {
      int d = 0;
      while (d < keys.length && model.getOrDefault(keys[d], new BitSet()).get(s)) {
        d++;
      }
      depth[s] = d;
    }
    return depth;
  }

  /** Few distinct keys in a large fleet make dense holder sets: every form of {@link HolderSets} is exercised. */
  @ParameterizedTest
  @CsvSource({"3, 5000", "64, 5000", "130, 5000", "1024, 5000", "300, 200", "1024, 40"})
  void matchesAMapModelUnderRandomOperations(int slots, int distinct) {
    SplittableRandom r = new SplittableRandom(slots);
    BlockTable table = new BlockTable();
    Map<Long, BitSet> model = new HashMap<>();
    for (int op = 0; op < 60_000; op++) {
      long k = key(r, distinct);
      int slot = r.nextInt(slots);
      int what = r.nextInt(100);
      if (what < 55) {
        boolean expected = !model.computeIfAbsent(k, x -> new BitSet()).get(slot);
        model.get(k).set(slot);
        assertThat(table.add(k, slot)).isEqualTo(expected);
      } else if (what < 99) {
        BitSet b = model.get(k);
        boolean expected = b != null && b.get(slot);
        if (b != null) {
          b.clear(slot);
          if (b.isEmpty()) {
            model.remove(k);
          }
        }
        assertThat(table.remove(k, slot)).isEqualTo(expected);
      } else if (op % 7 == 0) {
        int gone = r.nextInt(slots);
        table.clearSlot(gone);
        model.values().forEach(b -> b.clear(gone));
        model.values().removeIf(BitSet::isEmpty);
      }
      if (op % 500 == 0) {
        long[] prompt = new long[1 + r.nextInt(40)];
        for (int i = 0; i < prompt.length; i++) {
          prompt[i] = i < prompt.length / 2 && !model.isEmpty() && r.nextBoolean()
              ? model.keySet().iterator().next() : key(r, distinct);
        }
        assertThat(walkAll(table, prompt, slots)).isEqualTo(walkModel(model, prompt, slots));
      }
    }
    assertThat(table.keyCount()).isEqualTo(model.size());
    for (Map.Entry<Long, BitSet> e : model.entrySet()) {
      for (int s = 0; s < slots; s++) {
        assertThat(table.contains(e.getKey(), s)).isEqualTo(e.getValue().get(s));
      }
    }
  }

  @Test
  void walkCountsLeadingKeysOnlyAcrossChunks() {
    BlockTable table = new BlockTable();
    long[] keys = new long[100];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = (i + 1) * 0x9E3779B97F4A7C15L;
    }
    for (int i = 0; i < 100; i++) {
      table.add(keys[i], 0); // slot 0 holds everything
    }
    for (int i = 0; i < 37; i++) {
      table.add(keys[i], 1); // slot 1 holds the first 37
    }
    for (int i = 0; i < 100; i++) {
      if (i != 3) {
        table.add(keys[i], 2); // slot 2 misses block 3
      }
    }
    assertThat(walkAll(table, keys, 4)).containsExactly(100, 37, 3, 0);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 7, 64, 65, 200})
  void bisectionFindsEveryDepthOfPrefixClosedHolders(int slots) {
    SplittableRandom r = new SplittableRandom(slots);
    for (int round = 0; round < 300; round++) {
      BlockTable table = new BlockTable();
      long[] keys = new long[r.nextInt(600)];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = r.nextLong() | 1;
      }
      // Each slot holds a prefix of the prompt: none, all, or any length in between, plus keys of other prompts.
      for (int s = 0; s < slots; s++) {
        int depth = switch (r.nextInt(4)) {
          case 0 -> 0;
          case 1 -> keys.length;
          default -> r.nextInt(keys.length + 1);
        };
        for (int i = 0; i < depth; i++) {
          table.add(keys[i], s);
        }
        for (int i = 0; i < 20; i++) {
          table.add(r.nextLong() | 1, s);
        }
      }
      assertThat(bisectAll(table, keys, slots)).as("round %d", round).isEqualTo(walkAll(table, keys, slots));
    }
  }

  @Test
  void bisectionOfAnEmptyPromptMatchesNothing() {
    BlockTable table = new BlockTable();
    assertThat(bisectAll(table, new long[0], 3)).containsExactly(0, 0, 0);
  }

  @Test
  void shrinksAfterMostKeysLeave() {
    BlockTable table = new BlockTable();
    for (long k = 1; k <= 200_000; k++) {
      table.add(k * 0x9E3779B97F4A7C15L, 5);
    }
    long full = table.arrayBytes();
    for (long k = 1; k <= 199_000; k++) {
      table.remove(k * 0x9E3779B97F4A7C15L, 5);
    }
    assertThat(table.keyCount()).isEqualTo(1000);
    assertThat(table.arrayBytes()).isLessThan(full / 20);
    for (long k = 199_001; k <= 200_000; k++) {
      assertThat(table.contains(k * 0x9E3779B97F4A7C15L, 5)).isTrue();
    }
  }

  @Test
  void walksSeeConsistentEntriesWhileAWriterChurns() throws InterruptedException {
    BlockTable table = new BlockTable();
    long[] stable = new long[64];
    for (int i = 0; i < stable.length; i++) {
      stable[i] = (i + 1) * 0xC2B2AE3D27D4EB4FL;
      table.add(stable[i], 7);
    }
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer = new Thread(() -> {
      SplittableRandom r = new SplittableRandom(1);
      List<Long> live = new ArrayList<>();
      while (!stop.get()) {
        long k = r.nextLong() | 1;
        table.add(k, r.nextInt(64));
        live.add(k);
        if (live.size() > 50_000) {
          for (Long gone : live) {
            for (int s = 0; s < 64; s++) {
              table.remove(gone, s);
            }
          }
          live.clear();
        }
      }
    });
    writer.start();
    try {
      for (int round = 0; round < 5_000; round++) {
        int[] depth = walkAll(table, stable, 8);
        assertThat(depth[7]).isEqualTo(64);
      }
    } finally {
      stop.set(true);
      writer.join();
    }
  }
}
