package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link HolderSets} against {@link BitSet}: a set grows through every form and shrinks back to empty. */
class HolderSetsTest {

  private static void assertSame(HolderSets sets, long h, BitSet model, int slots) {
    int words = ((slots - 1) >>> 6) + 1;
    long[] out = new long[words + 1];
    out[words] = -1; // beyond the requested words: left alone
    sets.copyTo(h, out, 0, words);
    assertThat(out[words]).isEqualTo(-1);
    long[] expected = java.util.Arrays.copyOf(model.toLongArray(), words);
    assertThat(java.util.Arrays.copyOf(out, words)).isEqualTo(expected);
    assertThat(sets.word0(h)).isEqualTo(expected[0]);
    for (int s = 0; s < slots; s++) {
      assertThat(sets.contains(h, s)).as("slot %d", s).isEqualTo(model.get(s));
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {62, 63, 200, 1024, 4096})
  void growsAndShrinksThroughEveryFormMatchingABitSet(int slots) {
    SplittableRandom r = new SplittableRandom(slots);
    HolderSets sets = new HolderSets();
    BitSet model = new BitSet();
    long h = 0;
    int[] order = r.ints(0, slots).distinct().limit(slots).toArray();
    for (int slot : order) {
      h = sets.with(h, slot);
      model.set(slot);
      if (model.cardinality() % 7 == 1 || slots <= 200) {
        assertSame(sets, h, model, slots);
      }
    }
    assertSame(sets, h, model, slots);
    for (int i = order.length - 1; i >= 0; i--) {
      int slot = order[i]; // in reverse insertion order
      h = sets.without(h, slot);
      model.clear(slot);
      if (model.cardinality() % 7 == 1 || slots <= 200) {
        assertSame(sets, h, model, slots);
      }
    }
    assertThat(h).as("the empty set is the word 0").isZero();
  }

  @Test
  void fewHoldersInALargeFleetStayInTheWordItself() {
    HolderSets sets = new HolderSets();
    long empty = sets.arrayBytes();
    long h = sets.with(sets.with(sets.with(0, 1000), 5), 777);
    assertThat(sets.arrayBytes()).as("three holders: inline").isEqualTo(empty);
    h = sets.with(h, 900);
    assertThat(sets.arrayBytes()).as("a fourth: a list of a few ints").isGreaterThan(empty).isLessThan(empty + 128);
    h = sets.without(h, 900);
    BitSet model = new BitSet();
    model.set(5);
    model.set(777);
    model.set(1000);
    assertSame(sets, h, model, 1024);
  }

  @Test
  void aDenseSetBecomesABitsetAndAFreedArrayIsReused() {
    HolderSets sets = new HolderSets();
    long empty = sets.arrayBytes();
    long h = 0;
    for (int s = 0; s < 1024; s += 2) {
      h = sets.with(h, s);
    }
    // 512 of 1,024 slots: a 16-word bitset (144 bytes with its header) and the pools' small arrays, not 512 ints
    assertThat(sets.arrayBytes() - empty).isLessThan(400);
    for (int s = 0; s < 1024; s += 2) {
      h = sets.without(h, s);
    }
    assertThat(h).isZero();
    for (int s = 0; s < 1024; s += 2) {
      h = sets.with(h, s);
    }
    long dense = sets.arrayBytes();
    for (int s = 0; s < 1024; s += 2) {
      h = sets.without(h, s);
    }
    long again = 0;
    for (int s = 0; s < 1024; s += 2) {
      again = sets.with(again, s);
    }
    assertThat(sets.arrayBytes()).as("no growth of the pools on reuse").isEqualTo(dense);
  }
}
