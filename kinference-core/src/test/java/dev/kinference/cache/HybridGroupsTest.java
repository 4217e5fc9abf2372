package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * vLLM's hybrid hit rule in its one home, fed events as a Qwen3.5-like model's server sends them (Mamba groups 0
 * and 1 listing only the state's block of each span, full attention indexed): what a declared group does before its
 * first event, copies within a group, events of a group never described, and {@link HybridCacheIndex} cutting the
 * wrapped index's hits with an endpoint's groups.
 */
class HybridGroupsTest {

  static final int BLOCKS = 6;
  final int[] tokens = Fixtures.tokens(7, BLOCKS * Fixtures.BLOCK);
  final PrefixKeys prompt = Fixtures.keys(tokens);
  /** The indexed (full-attention) group's router key by engine hash: blocks 0-5 are held. */
  final Map<Long, Long> indexed = new HashMap<>();
  final HybridGroups groups = new HybridGroups(Fixtures.MODEL);

  HybridGroupsTest() {
    for (int b = 0; b < BLOCKS; b++) {
      indexed.put(hash(b), prompt.key(b));
    }
  }

  static long hash(int block) {
    return 0xF000_0000_0000_0000L + block;
  }

  @Nullable Long indexedKeyOf(long hash) {
    return indexed.get(hash);
  }

  /** A Mamba group's BlockStored: the tokens of blocks {@code from..to-1}, the state of the last one only. */
  KvEvent state(int from, int to) {
    return new KvEvent.BlockStored(new long[] {hash(to - 1)}, from == 0 ? null : hash(from - 1),
        Arrays.copyOfRange(tokens, from * Fixtures.BLOCK, to * Fixtures.BLOCK), Fixtures.BLOCK, null,
        KvEvent.Medium.GPU, null);
  }

  static KvEvent removed(int block) {
    return new KvEvent.BlockRemoved(new long[] {hash(block)}, KvEvent.Medium.GPU);
  }

  void apply(int group, HybridGroups.Role role, KvEvent event) {
    assertThat(groups.apply(group, role, 0, event, this::indexedKeyOf)).isTrue();
  }

  @Test
  void aHitEndsAtTheLastBlockWhoseStateEveryMambaGroupHolds() {
    for (int g = 0; g < 2; g++) {
      apply(g, HybridGroups.Role.MAMBA, state(0, 2)); // chunks of two blocks: states at blocks 1 and 3
      apply(g, HybridGroups.Role.MAMBA, state(2, 4)); // the parent, block 1, is keyed through the indexed group
    }
    apply(0, HybridGroups.Role.MAMBA, state(4, 5)); // block 4's state in group 0 only
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(4);
    assertThat(groups.limit(prompt, 3)).isEqualTo(2);
    assertThat(groups.limit(prompt, 1)).isZero();
    apply(1, HybridGroups.Role.UNKNOWN, removed(3)); // removals do not say the kind: the group is known
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(2);
    apply(1, HybridGroups.Role.UNKNOWN, new KvEvent.AllBlocksCleared()); // clears every group
    assertThat(groups.limit(prompt, BLOCKS)).isZero();
  }

  @Test
  void aDeclaredGroupWithoutStatesCutsEveryHitAnUndeclaredOneIsUnknown() {
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(BLOCKS); // no group known: the indexed group decides
    groups.declare(0, HybridGroups.Role.MAMBA, 0, Fixtures.BLOCK);
    assertThat(groups.limit(prompt, BLOCKS)).isZero();
    apply(0, HybridGroups.Role.UNKNOWN, state(0, 3));
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(3);
  }

  @Test
  void aGroupOfAnotherBlockSizeDoesNotLimitHits() {
    groups.declare(0, HybridGroups.Role.MAMBA, 0, 2 * Fixtures.BLOCK);
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(BLOCKS);
  }

  @Test
  void aStateStaysWhileAnotherCopyOfItDoes() {
    apply(0, HybridGroups.Role.MAMBA, state(0, 3));
    apply(0, HybridGroups.Role.MAMBA, state(0, 3)); // a second request computed the same state
    apply(0, HybridGroups.Role.UNKNOWN, removed(2));
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(3);
    apply(0, HybridGroups.Role.UNKNOWN, removed(2));
    assertThat(groups.limit(prompt, BLOCKS)).isZero();
  }

  @Test
  void anIndexedHashStaysWhileAnotherCopyOfItDoes() {
    KvEvent.BlockStored stored = new KvEvent.BlockStored(new long[] {hash(0)}, null,
        Arrays.copyOf(tokens, Fixtures.BLOCK), Fixtures.BLOCK, null, KvEvent.Medium.GPU, null);
    Map<Long, Long> none = Map.of();
    assertThat(groups.indexedEvent(stored, none::get)).isSameAs(stored); // the first copy
    assertThat(groups.indexedEvent(stored, this::indexedKeyOf)).isSameAs(stored); // the index holds it: a copy
    KvEvent removed = removed(0);
    assertThat(groups.indexedEvent(removed, this::indexedKeyOf)).isNull(); // one copy stays
    assertThat(groups.indexedEvent(removed, this::indexedKeyOf)).isSameAs(removed); // the last copy goes
  }

  @Test
  void eventsOfAGroupNeverDescribedAreDroppedAndSaySo() {
    assertThat(groups.apply(5, HybridGroups.Role.UNKNOWN, 0, removed(1), this::indexedKeyOf)).isFalse();
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(BLOCKS);
  }

  @Test
  void aDeclarationThatCannotBeAppliedIsRefusedAndChangesNothing() {
    assertThatThrownBy(() -> groups.declare(0, HybridGroups.Role.UNKNOWN, 0, Fixtures.BLOCK))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("UNKNOWN");
    assertThatThrownBy(() -> groups.declare(0, HybridGroups.Role.MAMBA, 0, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("block size 0");
    assertThat(groups.limit(prompt, BLOCKS)).isEqualTo(BLOCKS);
  }

  @Test
  void theHybridIndexCutsTheWrappedIndexsHitsOfRegisteredEndpointsOnly() {
    PreciseCacheIndex precise = new PreciseCacheIndex();
    HybridCacheIndex index = HybridCacheIndex.wrap(precise);
    var fleet = Fixtures.fleet(precise, 2);
    EndpointState hybrid = Fixtures.member(fleet, 0);
    EndpointState plain = Fixtures.member(fleet, 1);
    KvEvent.BlockStored all = new KvEvent.BlockStored(
        java.util.stream.IntStream.range(0, BLOCKS).mapToLong(HybridGroupsTest::hash).toArray(), null, tokens,
        Fixtures.BLOCK, null, KvEvent.Medium.GPU, null);
    index.onEvent(hybrid, all);
    index.onEvent(plain, all);
    groups.declare(0, HybridGroups.Role.MAMBA, 0, Fixtures.BLOCK);
    apply(0, HybridGroups.Role.UNKNOWN, state(0, 4));
    index.register(hybrid, groups);
    assertThat(Fixtures.match(index, tokens, hybrid)).isEqualTo(4);
    assertThat(Fixtures.match(index, tokens, plain)).isEqualTo(BLOCKS);
    index.unregister(hybrid, new HybridGroups(Fixtures.MODEL)); // not the registered groups: nothing changes
    assertThat(Fixtures.match(index, tokens, hybrid)).isEqualTo(4);
    index.unregister(hybrid, groups);
    assertThat(Fixtures.match(index, tokens, hybrid)).isEqualTo(BLOCKS);
    assertThat(HybridCacheIndex.wrap(index)).isSameAs(index);
  }
}
