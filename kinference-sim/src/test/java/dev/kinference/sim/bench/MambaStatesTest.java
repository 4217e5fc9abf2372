package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineStepEvents;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's Mamba rule, fed events as vLLM sends them for a Qwen3.5-like model (Mamba groups 0-2, full
 * attention 3): a hit found in full attention ends at its last block whose state all three Mamba groups hold, and a
 * copy's removal does not drop a full-attention hash another copy still holds.
 */
class MambaStatesTest {

  static final int BLOCK = 4;
  final int[] tokens = IntStream.range(0, 6 * BLOCK).toArray();
  final Map<Long, Long> fullKeys = new HashMap<>();

  long key(int blocks) {
    long k = BlockKeys.seed("m", null, null);
    for (int b = 0; b < blocks; b++) {
      k = BlockKeys.next(k, tokens, b * BLOCK, BLOCK);
    }
    return k;
  }

  @Nullable Long fullKeyOf(long hash) {
    return fullKeys.get(hash);
  }

  /** A state of block {@code last} stored in each of groups 0-2, its event spanning blocks {@code first..last}. */
  EngineStepEvents states(int first, int last, int groups) {
    int[] span = java.util.Arrays.copyOfRange(tokens, first * BLOCK, (last + 1) * BLOCK);
    Long parent = first == 0 ? null : 100L + first - 1;
    List<KvEvent> events = new java.util.ArrayList<>();
    List<Integer> idx = new java.util.ArrayList<>();
    for (int g = 0; g < groups; g++) {
      events.add(new KvEvent.BlockStored(new long[] {100L + last}, parent, span, BLOCK, null, KvEvent.Medium.GPU,
          null));
      idx.add(g);
    }
    return new EngineStepEvents(0, 0, events, idx, 3);
  }

  PrefixKeys prompt(int blocks) {
    long[] keys = new long[blocks];
    for (int b = 0; b < blocks; b++) {
      keys[b] = key(b + 1);
    }
    return PrefixKeys.ofKeys(keys, BLOCK, blocks * BLOCK + 1);
  }

  @Test
  void aHitEndsAtTheLastBlockWhoseStateEveryMambaGroupHolds() {
    MambaStates states = new MambaStates("m", 1, 3, BLOCK);
    for (int b = 0; b < 6; b++) {
      fullKeys.put(100L + b, key(b + 1)); // full attention holds blocks 0-5
    }
    states.apply(0, states(0, 1, 3), this::fullKeyOf); // a state at block 1 (first chunk: 2 blocks)
    states.apply(0, states(2, 3, 3), this::fullKeyOf); // and at block 3
    states.apply(0, states(4, 4, 2), this::fullKeyOf); // block 4's state in two of the three groups only
    assertThat(states.limit(0, prompt(6), 6)).isEqualTo(4);
    assertThat(states.limit(0, prompt(6), 3)).isEqualTo(2);
    assertThat(states.limit(0, prompt(6), 1)).isZero();
    states.apply(0, new EngineStepEvents(0, 0, List.of(new KvEvent.BlockRemoved(new long[] {103L},
        KvEvent.Medium.GPU)), List.of(1), 3), this::fullKeyOf);
    assertThat(states.limit(0, prompt(6), 6)).isEqualTo(2);
  }

  @Test
  void aFullAttentionHashStaysWhileAnotherCopyOfItDoes() {
    MambaStates states = new MambaStates("m", 1, 3, BLOCK);
    KvEvent.BlockStored stored = new KvEvent.BlockStored(new long[] {100L}, null,
        java.util.Arrays.copyOf(tokens, BLOCK), BLOCK, null, KvEvent.Medium.GPU, null);
    assertThat(states.indexedEvent(0, stored, this::fullKeyOf)).isSameAs(stored);
    fullKeys.put(100L, key(1));
    assertThat(states.indexedEvent(0, stored, this::fullKeyOf)).isSameAs(stored); // a second copy
    KvEvent.BlockRemoved removed = new KvEvent.BlockRemoved(new long[] {100L}, KvEvent.Medium.GPU);
    assertThat(states.indexedEvent(0, removed, this::fullKeyOf)).isNull(); // one copy stays
    assertThat(states.indexedEvent(0, removed, this::fullKeyOf)).isSameAs(removed); // the last copy goes
  }
}
