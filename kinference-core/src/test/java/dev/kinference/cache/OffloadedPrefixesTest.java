package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OffloadedPrefixesTest {

  static final String MODEL = "m";
  static final int BLOCK = 4;
  final int[] tokens = IntStream.range(0, 8 * BLOCK).map(i -> 500 + i).toArray();
  final PrefixKeys keys = PrefixKeys.of(BlockKeys.seed(MODEL, null, null), tokens, tokens.length, BLOCK);
  final OffloadedPrefixes tier = new OffloadedPrefixes(MODEL, 1000);
  final Map<Long, Long> gpu = new HashMap<>();

  KvEvent.BlockStored cpu(int from, int to, boolean withTokens) {
    long[] hashes = LongRange.of(100 + from, 100 + to);
    return new KvEvent.BlockStored(hashes, withTokens && from > 0 ? Long.valueOf(100 + from - 1) : null,
        withTokens ? Arrays.copyOfRange(tokens, from * BLOCK, to * BLOCK) : new int[0], BLOCK, null,
        KvEvent.Medium.CPU, null);
  }

  void apply(KvEvent e) {
    tier.onEvent(e, gpu::get);
  }

  @Test
  void selfDescribingEventsAreKeyedThroughTheirParents() {
    apply(cpu(0, 3, true));
    apply(cpu(3, 6, true));
    assertThat(tier.blocksAfter(keys, 0)).isEqualTo(6);
    assertThat(tier.blocksAfter(keys, 2)).isEqualTo(4);
    assertThat(tier.blocksAfter(keys, 6)).isZero();
    assertThat(tier.reloadSeconds(500)).isEqualTo(0.5);
  }

  @Test
  void placeholderEventsAreKeyedThroughTheGpuBlockOfTheSameHashOrCountedUnkeyed() {
    for (int b = 0; b < 4; b++) {
      gpu.put(100L + b, keys.key(b));
    }
    apply(cpu(0, 6, false));
    assertThat(tier.blocksAfter(keys, 0)).isEqualTo(4);
    assertThat(tier.unkeyedBlocks()).isEqualTo(2);
  }

  @Test
  void aHashAnnouncedTwiceNeedsTwoRemovals() {
    apply(cpu(0, 2, true));
    apply(cpu(0, 2, true));
    apply(new KvEvent.BlockRemoved(new long[] {101}, KvEvent.Medium.CPU));
    assertThat(tier.blocksAfter(keys, 0)).isEqualTo(2);
    apply(new KvEvent.BlockRemoved(new long[] {101}, KvEvent.Medium.CPU));
    assertThat(tier.blocksAfter(keys, 0)).isEqualTo(1);
  }

  @Test
  void gpuEventsAreIgnoredAndAClearForgetsEverything() {
    apply(new KvEvent.BlockStored(new long[] {100}, null, Arrays.copyOf(tokens, BLOCK), BLOCK, null,
        KvEvent.Medium.GPU, null));
    assertThat(tier.blockCount()).isZero();
    apply(cpu(0, 3, true));
    apply(new KvEvent.AllBlocksCleared());
    assertThat(tier.blockCount()).isZero();
  }

  @Test
  void aReloadSpeedThatIsNotPositiveIsRefused() {
    assertThatThrownBy(() -> new OffloadedPrefixes(MODEL, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reloadTokensPerSecond");
  }

  static final class LongRange {
    static long[] of(long from, long to) {
      return java.util.stream.LongStream.range(from, to).toArray();
    }
  }
}
