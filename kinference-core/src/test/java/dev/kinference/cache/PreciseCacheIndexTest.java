package dev.kinference.cache;

import static dev.kinference.cache.Fixtures.BLOCK;
import static dev.kinference.cache.Fixtures.MODEL;
import static dev.kinference.cache.Fixtures.match;
import static dev.kinference.cache.Fixtures.member;
import static dev.kinference.cache.Fixtures.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PreciseCacheIndexTest {

  private final PreciseCacheIndex index = new PreciseCacheIndex();
  private final Fleet fleet = Fixtures.fleet(index, 2);
  private final EndpointState e0 = member(fleet, 0);
  private final EndpointState e1 = member(fleet, 1);

  private static KvEvent.BlockStored stored(long[] hashes, Long parent, int[] tokens) {
    return new KvEvent.BlockStored(hashes, parent, tokens, BLOCK, null, KvEvent.Medium.GPU, null);
  }

  @Test
  void engineHashesMapToRouterKeysRecomputedFromTokens() {
    int[] prompt = tokens(1, 6 * BLOCK);
    // hashes at and above 2^63 are negative longs: they must map like any other
    long[] hashes = {0x8000_0000_0000_0000L, -1L, 42L, 0xDAB8_9BAA_7B58_57C0L, 7L, 9L};
    index.onEvent(e0, stored(hashes, null, prompt));
    assertThat(match(index, prompt, e0)).isEqualTo(6);
    long[] routerKeys = BlockKeys.chain(BlockKeys.seed(MODEL, null, null), prompt, prompt.length, BLOCK);
    assertThat(index.routerKey(e0, -1L)).isEqualTo(routerKeys[1]);
    assertThat(index.holds(e0, routerKeys[5])).isTrue();
  }

  @Test
  void aChainContinuesAcrossEventsThroughTheParentHash() {
    int[] prompt = tokens(2, 8 * BLOCK);
    index.onEvent(e0, stored(new long[] {11, 12, 13}, null, Arrays.copyOf(prompt, 3 * BLOCK)));
    index.onEvent(e0, stored(new long[] {14, 15, 16, 17, 18}, 13L, Arrays.copyOfRange(prompt, 3 * BLOCK, 8 * BLOCK)));
    assertThat(match(index, prompt, e0)).isEqualTo(8);
  }

  @Test
  void removedBlocksStopMatchingAndLaterOnesAreUnreachable() {
    int[] prompt = tokens(3, 6 * BLOCK);
    index.onEvent(e0, stored(new long[] {1, 2, 3, 4, 5, 6}, null, prompt));
    index.onEvent(e0, new KvEvent.BlockRemoved(new long[] {6, 5}, KvEvent.Medium.GPU));
    assertThat(match(index, prompt, e0)).isEqualTo(4);
    index.onEvent(e0, new KvEvent.BlockRemoved(new long[] {2}, KvEvent.Medium.GPU));
    assertThat(match(index, prompt, e0)).as("vLLM stops matching at the first missing block").isEqualTo(1);
    assertThat(index.blockCount(e0)).isEqualTo(3);
    assertThat(index.isPrefixClosed(e0)).as("blocks 3 and 4 are held without block 2").isFalse();
    assertThat(index.isPrefixClosed(e1)).isTrue();
  }

  @Test
  void blocksEvictedTailFirstKeepTheEndpointPrefixClosedAndAClearRestoresIt() {
    int[] prompt = tokens(3, 6 * BLOCK);
    index.onEvent(e0, stored(new long[] {1, 2, 3}, null, Arrays.copyOf(prompt, 3 * BLOCK)));
    index.onEvent(e0, stored(new long[] {4, 5}, 3L, Arrays.copyOfRange(prompt, 3 * BLOCK, 5 * BLOCK)));
    index.onEvent(e0, stored(new long[] {14, 15}, 3L, tokens(4, 2 * BLOCK))); // a second branch under block 3
    index.onEvent(e0, new KvEvent.BlockRemoved(new long[] {5, 4, 15}, KvEvent.Medium.GPU));
    assertThat(index.isPrefixClosed(e0)).isTrue();
    assertThat(match(index, prompt, e0)).isEqualTo(3);
    index.onEvent(e0, new KvEvent.BlockRemoved(new long[] {3}, KvEvent.Medium.GPU));
    assertThat(index.isPrefixClosed(e0)).as("block 14 is held without block 3").isFalse();
    assertThat(match(index, prompt, e0)).isEqualTo(2);
    index.clearEndpoint(e0);
    assertThat(index.isPrefixClosed(e0)).isTrue();
    index.onEvent(e0, stored(new long[] {1, 2, 3, 4, 5, 6}, null, prompt));
    assertThat(match(index, prompt, e0)).isEqualTo(6);
  }

  @Test
  void allBlocksClearedForgetsOnlyThatEndpoint() {
    int[] prompt = tokens(4, 4 * BLOCK);
    index.onEvent(e0, stored(new long[] {1, 2, 3, 4}, null, prompt));
    index.onEvent(e1, stored(new long[] {91, 92, 93, 94}, null, prompt));
    index.onEvent(e0, new KvEvent.AllBlocksCleared());
    assertThat(match(index, prompt, e0)).isZero();
    assertThat(match(index, prompt, e1)).isEqualTo(4);
    assertThat(index.entryCount()).isEqualTo(4);
  }

  @Test
  void aBlockWhoseParentWasMissedIsCountedAsOrphanedNotGuessed() {
    int[] prompt = tokens(5, 2 * BLOCK);
    index.onEvent(e0, stored(new long[] {21, 22}, 999L, prompt));
    assertThat(index.blockCount(e0)).isZero();
    assertThat(index.stats().orphanedBlocks()).isEqualTo(2);
  }

  @Test
  void cpuTierAndTokenlessEventsAreIgnored() {
    int[] prompt = tokens(6, 2 * BLOCK);
    index.onEvent(e0, new KvEvent.BlockStored(new long[] {1, 2}, null, prompt, BLOCK, null, KvEvent.Medium.CPU,
        null));
    index.onEvent(e0, stored(new long[] {3, 4}, null, new int[0]));
    assertThat(index.blockCount(e0)).isZero();
    assertThat(index.stats().otherTierEvents()).isEqualTo(1);
    assertThat(index.stats().blocksWithoutTokens()).isEqualTo(2);
  }

  @Test
  void loraAndCacheSaltSeedTheirOwnChains() {
    int[] prompt = tokens(7, 3 * BLOCK);
    index.onEvent(e0, new KvEvent.BlockStored(new long[] {1, 2, 3}, null, prompt, BLOCK, "sql-adapter",
        KvEvent.Medium.GPU, null));
    index.onEvent(e1, new KvEvent.BlockStored(new long[] {1, 2, 3}, null, prompt, BLOCK, null, KvEvent.Medium.GPU,
        "tenant-salt"));
    assertThat(match(index, prompt, e0)).as("base-model prompt vs LoRA blocks").isZero();
    assertThat(match(index, prompt, e1)).as("unsalted prompt vs salted blocks").isZero();
    int[] out = new int[2];
    index.lookup(PrefixKeys.of(BlockKeys.seed(MODEL, "sql-adapter", null), prompt, prompt.length, BLOCK),
        new EndpointState[] {e0, e1}, 2, out);
    assertThat(out).containsExactly(3, 0);
    index.lookup(PrefixKeys.of(BlockKeys.seed(MODEL, null, "tenant-salt"), prompt, prompt.length, BLOCK),
        new EndpointState[] {e0, e1}, 2, out);
    assertThat(out).containsExactly(0, 3);
  }

  @Test
  void sharedBlocksAreIndexedOncePerEndpoint() {
    int[] prompt = tokens(8, 5 * BLOCK);
    index.onEvent(e0, stored(new long[] {1, 2, 3, 4, 5}, null, prompt));
    index.onEvent(e1, stored(new long[] {6, 7, 8, 9, 10}, null, prompt));
    assertThat(index.entryCount()).isEqualTo(10);
    assertThat(index.distinctBlocks()).isEqualTo(5);
  }

  @Test
  void manyEndpointsBeyondOneBitsetWordStillMatch() {
    PreciseCacheIndex wide = new PreciseCacheIndex();
    Fleet big = Fixtures.fleet(wide, 150);
    int[] prompt = tokens(9, 4 * BLOCK);
    EndpointState last = member(big, 149);
    EndpointState mid = member(big, 70);
    wide.onEvent(last, stored(new long[] {1, 2, 3, 4}, null, prompt));
    wide.onEvent(mid, stored(new long[] {5, 6}, null, Arrays.copyOf(prompt, 2 * BLOCK)));
    EndpointState[] all = big.endpoints().toArray(new EndpointState[0]);
    int[] out = new int[all.length];
    wide.lookup(Fixtures.keys(prompt), all, all.length, out);
    for (int i = 0; i < all.length; i++) {
      int expected = all[i] == last ? 4 : all[i] == mid ? 2 : 0;
      assertThat(out[i]).as("endpoint %s", all[i].id()).isEqualTo(expected);
    }
  }

  @Test
  void eventsForAnEndpointThatLeftAreIgnored() {
    int[] prompt = tokens(10, 2 * BLOCK);
    fleet.setEndpoints(java.util.List.of(e1.endpoint()));
    index.onEvent(e0, stored(new long[] {1, 2}, null, prompt));
    assertThat(index.entryCount()).isZero();
  }
}
