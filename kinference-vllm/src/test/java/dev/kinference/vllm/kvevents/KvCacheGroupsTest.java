package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.testkit.vllm.KvEventEncoder;
import dev.kinference.testkit.vllm.KvEventEncoder.Group;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hybrid models' KV-cache groups and the CPU tier, from batches encoded as vLLM encodes them (msgpack, both layouts)
 * through the decoder, the groups and a precise index, without sockets.
 */
class KvCacheGroupsTest {

  static final String MODEL = "google/gemma-3-27b-it";
  static final int BLOCK = 4;
  static final int BLOCKS = 8;
  static final Group FULL = new Group(1, "full_attention", 0);
  static final Group FULL_2 = new Group(2, "full_attention", 0);
  /** A window of 8 tokens: vLLM needs ceil((8 - 1) / 4) = 2 blocks before the hit's end. */
  static final Group WINDOW = new Group(0, "sliding_window", 8);
  static final Group MAMBA = new Group(3, "mamba", 0);

  final Fleet fleet = Fleet.create();
  final HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());
  final KvEventDecoder decoder = new KvEventDecoder();
  KvEventEncoder enc = KvEventEncoder.of(KvEventEncoder.Layout.MAP);
  EndpointState endpoint;
  KvCacheGroups groups;
  final int[] tokens = new int[BLOCKS * BLOCK];
  final long[] hashes = new long[BLOCKS];
  int clears;

  @BeforeEach
  void setUp() {
    fleet.addListener(index);
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", "http://127.0.0.1:1", MODEL)));
    endpoint = fleet.get("vllm-0");
    groups = new KvCacheGroups(MODEL);
    index.register(endpoint, groups.hybrid());
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = 1000 + i;
    }
    for (int b = 0; b < BLOCKS; b++) {
      hashes[b] = 0xF000_0000_0000_0000L + b; // above 2^63, as vLLM's are half the time
    }
  }

  /** vLLM's BlockStored of blocks {@code from..to-1} of the prompt. */
  KvEvent stored(int from, int to, KvEvent.Medium medium) {
    return new KvEvent.BlockStored(Arrays.copyOfRange(hashes, from, to), from == 0 ? null : hashes[from - 1],
        Arrays.copyOfRange(tokens, from * BLOCK, to * BLOCK), BLOCK, null, medium, null);
  }

  KvEvent stored(int from, int to) {
    return stored(from, to, KvEvent.Medium.GPU);
  }

  KvEvent removed(int... blocks) {
    long[] h = new long[blocks.length];
    for (int i = 0; i < blocks.length; i++) {
      h[i] = hashes[blocks[i]];
    }
    return new KvEvent.BlockRemoved(h, KvEvent.Medium.GPU);
  }

  /** Publishes one batch of {@code (event, group)} pairs through vLLM's encoding and the decoder. */
  void publish(Object... eventsAndGroups) {
    List<KvEvent> events = new ArrayList<>();
    List<Group> tags = new ArrayList<>();
    for (int i = 0; i < eventsAndGroups.length; i += 2) {
      events.add((KvEvent) eventsAndGroups[i]);
      tags.add((Group) eventsAndGroups[i + 1]);
    }
    KvEventBatch batch = decoder.decode(enc.encode(1.0, events, tags, 0));
    groups.apply(batch, index, endpoint, () -> {
      clears++;
      index.onEvent(endpoint, new KvEvent.AllBlocksCleared());
    });
  }

  /** How many leading blocks of the whole prompt the index says the endpoint holds. */
  int hit() {
    PrefixKeys keys = PrefixKeys.of(BlockKeys.seed(MODEL, null, null), tokens, tokens.length, BLOCK);
    int[] matched = new int[1];
    index.lookup(keys, new EndpointState[] {endpoint}, 1, matched);
    return matched[0];
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void aSlidingWindowGroupZeroIsNotTakenForTheFullAttentionGroup(KvEventEncoder.Layout layout) {
    enc = KvEventEncoder.of(layout);
    // vLLM caches a request's groups in order: the sliding-window group 0 first, then full-attention group 1
    publish(stored(0, BLOCKS), WINDOW, stored(0, BLOCKS), FULL);
    assertThat(groups.indexedGroup()).isEqualTo(1);
    assertThat(hit()).isEqualTo(BLOCKS);
    // the window group frees what falls out of the window; a full-attention hit needs only its last two blocks
    publish(removed(0, 1, 2, 3, 4, 5), WINDOW);
    assertThat(hit()).isEqualTo(BLOCKS);
    // group 0's removals never touch the indexed full-attention blocks
    assertThat(((PreciseCacheIndex) index.delegate()).blockCount(endpoint)).isEqualTo(BLOCKS);
  }

  @ParameterizedTest(name = "window group holds {0}: hit {1}")
  @CsvSource({
      "0 1 2 3 4 5 6 7, 8",
      "6 7, 8",
      "7, 0",          // one block of a two-block window: no window ends anywhere, and block 0 is not held
      "4 5 7, 6",      // the last full window ends after block 5
      "0 2 3 5, 4",    // the window of blocks 2..3 ends at 4
      "0, 1",          // fewer blocks than a window, from the start
      "'', 0",
  })
  void aSlidingWindowGroupNeedsTheLastWindowBeforeTheHitsEnd(String held, int expected) {
    publish(stored(0, BLOCKS), FULL, stored(0, BLOCKS), WINDOW);
    List<Integer> evicted = new ArrayList<>();
    List<String> kept = held.isBlank() ? List.of() : List.of(held.split(" "));
    for (int b = 0; b < BLOCKS; b++) {
      if (!kept.contains(String.valueOf(b))) {
        evicted.add(b);
      }
    }
    publish(removed(evicted.stream().mapToInt(Integer::intValue).toArray()), WINDOW);
    assertThat(hit()).isEqualTo(expected);
  }

  @Test
  void everyFullAttentionGroupMustHoldTheWholePrefix() {
    publish(stored(0, BLOCKS), FULL, stored(0, BLOCKS), FULL_2);
    assertThat(hit()).isEqualTo(BLOCKS);
    publish(removed(7, 6, 5), FULL_2);
    assertThat(hit()).isEqualTo(5);
  }

  @Test
  void aMambaGroupNeedsTheStateAtTheHitsLastBlock() {
    publish(stored(0, BLOCKS), FULL, stored(0, BLOCKS), MAMBA);
    publish(removed(0, 1, 2, 4, 6, 7), MAMBA);
    assertThat(hit()).isEqualTo(6); // block 5 holds the state of the longest reusable prefix
  }

  /** A Mamba group's BlockStored in align mode: the tokens of blocks {@code from..to-1}, the state of the last only. */
  KvEvent state(int from, int to) {
    return new KvEvent.BlockStored(new long[] {hashes[to - 1]}, from == 0 ? null : hashes[from - 1],
        Arrays.copyOfRange(tokens, from * BLOCK, to * BLOCK), BLOCK, null, KvEvent.Medium.GPU, null);
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void mambaGroupsInAlignModeListOnlyTheStatesBlockAndTheHitEndsAtTheLastStateEveryGroupHolds(
      KvEventEncoder.Layout layout) {
    enc = KvEventEncoder.of(layout);
    Group m0 = new Group(0, "mamba", 0);
    Group m1 = new Group(1, "mamba", 0);
    Group full = new Group(3, "full_attention", 0);
    // as vLLM sends a Qwen3.5-like model's groups: Mamba groups first, the states of blocks 1 and 3 (chunks of two
    // blocks), then full attention; the parent of the second span (block 1) is keyed through full attention
    publish(state(0, 2), m0, state(0, 2), m1, stored(0, 2), full);
    publish(state(2, 4), m0, state(2, 4), m1, stored(2, 4), full);
    publish(stored(4, BLOCKS), full);
    assertThat(groups.indexedGroup()).isEqualTo(3);
    assertThat(hit()).isEqualTo(4);
    publish(removed(3), m1); // one Mamba group lost block 3's state: back to block 1's
    assertThat(hit()).isEqualTo(2);
  }

  @Test
  void aSecondCopyOfABlockKeepsItIndexedWhenTheFirstIsRemoved() {
    publish(stored(0, BLOCKS), FULL);
    publish(stored(2, 4), FULL); // vLLM computed blocks 2-3 again (a hit cut short) and caches a second copy
    publish(removed(3, 2), FULL); // the first copies are evicted
    assertThat(hit()).isEqualTo(BLOCKS);
    publish(removed(3), FULL); // the last copy of block 3
    assertThat(hit()).isEqualTo(3);
  }

  @Test
  void theGroupsLimitEachOtherUntilNoneShortensTheHit() {
    publish(stored(0, BLOCKS), FULL, stored(0, BLOCKS), WINDOW, stored(0, BLOCKS), MAMBA);
    publish(removed(5, 6, 7), MAMBA); // mamba: 5 blocks
    publish(removed(3, 4), WINDOW); // window: before 5, blocks 3..4 are gone; 1..2 end at 3
    assertThat(hit()).isEqualTo(3);
    publish(removed(2), MAMBA); // mamba: at most 3, block 2 gone: 2; window: blocks 0..1 end at 2
    assertThat(hit()).isEqualTo(2);
  }

  @Test
  void cpuTierBlocksAreCountedApartAndNeverGpuHits() {
    publish(stored(0, 4, KvEvent.Medium.CPU), FULL);
    assertThat(hit()).isZero();
    assertThat(groups.otherTierBlocks()).isEqualTo(4);
    publish(stored(0, BLOCKS), FULL);
    assertThat(hit()).isEqualTo(BLOCKS);
    publish(new KvEvent.BlockRemoved(new long[] {hashes[0], hashes[1]}, KvEvent.Medium.CPU), FULL);
    assertThat(groups.otherTierBlocks()).isEqualTo(2);
    assertThat(hit()).as("a CPU removal leaves the GPU blocks").isEqualTo(BLOCKS);
  }

  @Test
  void offloadedBlocksWithoutTokensAreCountedToo() {
    KvEvent cpu = new KvEvent.BlockStored(new long[] {hashes[0], hashes[1]}, null, new int[0], BLOCK, null,
        KvEvent.Medium.CPU, null);
    publish(cpu, FULL);
    assertThat(groups.otherTierBlocks()).isEqualTo(2);
    assertThat(hit()).isZero();
  }

  @Test
  void aServerThatDoesNotDescribeItsGroupsIsIndexedFromGroupZero() {
    KvEventBatch batch = decoder.decode(enc.encode(1.0, List.of(stored(0, BLOCKS)), 0));
    assertThat(batch.groups()).containsExactly(KvCacheGroup.UNDESCRIBED);
    groups.apply(batch, index, endpoint, () -> clears++);
    assertThat(groups.indexedGroup()).isZero();
    assertThat(hit()).isEqualTo(BLOCKS);
    assertThat(clears).isZero();
  }

  @Test
  void aFullAttentionGroupNamedLaterTakesOverAndTheEntriesAreRebuilt() {
    publish(stored(0, BLOCKS), WINDOW);
    assertThat(groups.indexedGroup()).isZero(); // for want of a full-attention group
    assertThat(hit()).isEqualTo(BLOCKS);
    publish(stored(0, 4), FULL);
    assertThat(clears).isEqualTo(1);
    assertThat(groups.indexedGroup()).isEqualTo(1);
    assertThat(hit()).isEqualTo(4); // the full-attention group holds four; the window group, still tracked, eight
  }

  @Test
  void allBlocksClearedForgetsEveryGroup() {
    publish(stored(0, BLOCKS), FULL, stored(0, BLOCKS), WINDOW, stored(0, 2, KvEvent.Medium.CPU), FULL);
    publish(new KvEvent.AllBlocksCleared(), new Group(0, null, 0));
    assertThat(hit()).isZero();
    assertThat(groups.otherTierBlocks()).isZero();
    publish(stored(0, BLOCKS), FULL);
    assertThat(hit()).as("the window group holds nothing now").isZero();
  }

  @Test
  void removalsOfAGroupNeverDescribedAreDroppedAndCounted() {
    publish(stored(0, BLOCKS), FULL);
    publish(removed(0), new Group(5, null, 0));
    assertThat(hit()).isEqualTo(BLOCKS);
    assertThat(groups.undescribedEvents()).isEqualTo(1);
  }
}
