package dev.kinference.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Two requests share block keys exactly as long as vLLM could share their KV blocks. */
class BlockKeysProperties {

  private static final long SEED = BlockKeys.seed("m", null, null);

  @Provide
  Arbitrary<int[]> tokens() {
    return Arbitraries.integers().between(0, 200_000).array(int[].class).ofMinSize(0).ofMaxSize(400);
  }

  @Property
  void identicalPrefixesGiveIdenticalKeys(@ForAll("tokens") int[] prefix, @ForAll("tokens") int[] tailA,
      @ForAll("tokens") int[] tailB, @ForAll @IntRange(min = 1, max = 64) int blockSize) {
    int[] a = concat(prefix, tailA);
    int[] b = concat(prefix, tailB);
    long[] ka = BlockKeys.chain(SEED, a, a.length, blockSize);
    long[] kb = BlockKeys.chain(SEED, b, b.length, blockSize);
    int sharedBlocks = prefix.length / blockSize;
    for (int i = 0; i < sharedBlocks; i++) {
      assertThat(ka[i]).isEqualTo(kb[i]);
    }
  }

  @Property
  void keysDivergeFromTheFirstDifferingBlockOn(@ForAll("tokens") int[] tokens,
      @ForAll @IntRange(min = 1, max = 32) int blockSize, @ForAll @IntRange(min = 0, max = 399) int position) {
    if (position >= tokens.length) {
      return;
    }
    int[] changed = tokens.clone();
    changed[position] ^= 1 + (position & 7);
    long[] a = BlockKeys.chain(SEED, tokens, tokens.length, blockSize);
    long[] b = BlockKeys.chain(SEED, changed, changed.length, blockSize);
    int firstChanged = position / blockSize;
    for (int i = 0; i < a.length; i++) {
      if (i < firstChanged) {
        assertThat(a[i]).isEqualTo(b[i]);
      } else {
        assertThat(a[i]).as("block %d after a change in block %d", i, firstChanged).isNotEqualTo(b[i]);
      }
    }
  }

  @Property
  void onlyFullBlocksGetKeysAndNoKeyIsZero(@ForAll("tokens") int[] tokens,
      @ForAll @IntRange(min = 1, max = 64) int blockSize) {
    long[] keys = BlockKeys.chain(SEED, tokens, tokens.length, blockSize);
    assertThat(keys).hasSize(tokens.length / blockSize);
    for (long k : keys) {
      assertThat(k).isNotZero();
    }
  }

  @Property
  void modelLoraAndSaltSeparateEveryBlock(@ForAll("tokens") int[] tokens) {
    if (tokens.length < 16) {
      return;
    }
    long[] base = BlockKeys.chain(BlockKeys.seed("m", null, null), tokens, tokens.length, 16);
    long[][] others = {
        BlockKeys.chain(BlockKeys.seed("other-model", null, null), tokens, tokens.length, 16),
        BlockKeys.chain(BlockKeys.seed("m", "adapter", null), tokens, tokens.length, 16),
        BlockKeys.chain(BlockKeys.seed("m", null, "salt"), tokens, tokens.length, 16),
    };
    for (long[] other : others) {
      for (int i = 0; i < base.length; i++) {
        assertThat(other[i]).isNotEqualTo(base[i]);
      }
    }
  }

  @Property
  void seedsDistinguishWhereFieldsMoveBetweenComponents() {
    assertThat(BlockKeys.seed("ab", null, null)).isNotEqualTo(BlockKeys.seed("a", "b", null));
    assertThat(BlockKeys.seed("m", "x", null)).isNotEqualTo(BlockKeys.seed("m", null, "x"));
    assertThat(BlockKeys.seed("m", "", null)).isEqualTo(BlockKeys.seed("m", null, null));
  }

  @Property
  void blockSizeChangesEveryKey(@ForAll("tokens") int[] tokens) {
    if (tokens.length < 32) {
      return;
    }
    long[] k16 = BlockKeys.chain(SEED, tokens, tokens.length, 16);
    long[] k32 = BlockKeys.chain(SEED, tokens, tokens.length, 32);
    assertThat(Arrays.stream(k32).filter(k -> Arrays.stream(k16).anyMatch(x -> x == k)).count()).isZero();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
