package dev.kinference.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The default Qwen3.5-shaped model as vLLM runs it with prefix caching ({@code mamba_cache_mode} align): a 784-token
 * block, three Mamba groups (0-2) beside full attention (3), prefill chunks cut at block boundaries, a state cached
 * at each boundary a step ends on, and a hit only as far as the last block whose state every Mamba group holds.
 */
class MambaGroupsTest {

  final List<EngineStepEvents> batches = new ArrayList<>();
  final Map<String, RequestOutcome> outcomes = new HashMap<>();
  final RequestListener recorder = new RequestListener() {
    @Override
    public void onFinished(RequestOutcome outcome) {
      outcomes.put(outcome.requestId(), outcome);
    }
  };

  SimEngine engine(int budget) {
    return SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_5_27B_FP8_MAMBA_ALIGN).numGpuBlocks(200)
        .maxNumBatchedTokens(budget).maxNumSeqs(8).kvEventListener(batches::add).build();
  }

  static int[] tokens(int seed, int n) {
    Random r = new Random(seed);
    return IntStream.range(0, n).map(i -> r.nextInt(1 << 30)).toArray();
  }

  /** {@code shared} tokens of {@code prompt}, then {@code rest} tokens of its own. */
  static int[] extend(int[] prompt, int shared, int rest, int seed) {
    int[] p = Arrays.copyOf(prompt, shared + rest);
    System.arraycopy(tokens(seed, rest), 0, p, shared, rest);
    return p;
  }

  static void run(SimEngine engine) {
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
  }

  @Test
  void vllmSizesTheBlockSoAnAttentionPageHoldsAMambaState() {
    ModelSpec m = ModelSpec.QWEN3_5_27B_FP8_MAMBA_ALIGN;
    assertThat(m.mambaLayers()).isEqualTo(48);
    assertThat(m.mambaGroups()).isEqualTo(3);
    assertThat(m.kvCacheGroups()).isEqualTo(4);
    assertThat(m.fullAttentionGroup()).isEqualTo(3);
    // 3,207,168-byte state over 4,096 bytes a token in 16-token steps: 49 x 16
    assertThat(m.mambaBlockSize()).isEqualTo(784);
    assertThat(m.withKvDtype(Dtype.FP8).mambaBlockSize()).isEqualTo(1568);
    assertThat(ModelSpec.QWEN3_8B.mambaGroups()).isZero();
    assertThat(ModelSpec.GPT_OSS_20B.fullAttentionGroup()).isZero();
    assertThat(ModelSpec.QWEN3_5_27B_FP8.mambaGroups()).as("the default keeps its state as a reservation").isZero();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> engine(512))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("below the 784-token block");
    EngineConfig c = engine(2048).config();
    assertThat(c.blockSize()).isEqualTo(784);
    assertThat(c.stateBlocksPerSequence()).isEqualTo(3);
  }

  @Test
  void statesAreCachedAtTheBoundariesWherePrefillChunksEndAndAHitEndsAtTheLastState() {
    SimEngine engine = engine(2048);
    int[] a = tokens(1, 3000);
    engine.submit(SimRequest.of("a", a, 1), recorder);
    run(engine);
    // chunks of 1,568 and 784 tokens (cut at block boundaries; the last full block's boundary is 2,352), then 648:
    // states at the ends of blocks 1 and 2, in each Mamba group; full attention holds blocks 0-2
    for (int g = 0; g < 3; g++) {
      assertThat(stored(g)).hasSize(2);
    }
    assertThat(stored(3)).hasSize(3);
    assertThat(engine.cachedPrefixTokens(extend(a, 2500, 500, 2), null, null)).isEqualTo(2352);
    assertThat(engine.cachedPrefixTokens(extend(a, 2000, 500, 3), null, null)).isEqualTo(1568);
    assertThat(engine.cachedPrefixTokens(extend(a, 1000, 500, 4), null, null)).isZero(); // no state at block 0
    engine.submit(SimRequest.of("b", extend(a, 2000, 500, 3), 1), recorder);
    run(engine);
    assertThat(outcomes.get("b").cachedTokens()).isEqualTo(1568);
  }

  @Test
  void aPromptPrefilledInOneChunkKeepsOnlyTheStateAtItsLastBoundarySoAShorterSharedPrefixMissesEntirely() {
    SimEngine engine = engine(8192);
    int[] a = tokens(5, 5000);
    engine.submit(SimRequest.of("a", a, 1), recorder);
    run(engine);
    // one chunk to 4,704 (block 5's end), then 296 tokens: full attention holds six blocks, the Mamba groups one
    // state; a request sharing 4,000 tokens finds five blocks in full attention and no state among them (vLLM #45238)
    assertThat(stored(3)).hasSize(6);
    assertThat(stored(0)).hasSize(1);
    assertThat(engine.cachedPrefixTokens(extend(a, 4000, 1000, 6), null, null)).isZero();
    assertThat(engine.cachedPrefixTokens(extend(a, 4800, 100, 7), null, null)).isEqualTo(4704);
  }

  @Test
  void decodeLeavesAStateAtEachBoundaryItCrossesAndEveryBlockIsFreedAtTheEnd() {
    SimEngine engine = engine(2048);
    int[] a = tokens(8, 700);
    engine.submit(SimRequest.of("a", a, 1000), recorder);
    run(engine);
    // 700 prompt tokens (no full block: one chunk), then decode to 1,700: states at 784 and 1,568
    assertThat(stored(1)).hasSize(2);
    assertThat(engine.pool().freeCount()).isEqualTo(engine.pool().numBlocks() - 1);
    // the Mamba groups' events list only the state's block but carry the tokens of the blocks they complete
    KvEvent.BlockStored first = firstStored(0);
    assertThat(first.blockHashes()).hasSize(1);
    assertThat(first.tokenIds()).hasSize(784);
  }

  List<Long> stored(int group) {
    List<Long> out = new ArrayList<>();
    for (EngineStepEvents b : batches) {
      assertThat(b.fullAttentionGroup()).isEqualTo(3);
      for (int i = 0; i < b.events().size(); i++) {
        if (b.group(i) == group && b.events().get(i) instanceof KvEvent.BlockStored s) {
          Arrays.stream(s.blockHashes()).forEach(out::add);
        }
      }
    }
    return out;
  }

  KvEvent.BlockStored firstStored(int group) {
    for (EngineStepEvents b : batches) {
      for (int i = 0; i < b.events().size(); i++) {
        if (b.group(i) == group && b.events().get(i) instanceof KvEvent.BlockStored s) {
          return s;
        }
      }
    }
    throw new AssertionError("no BlockStored of group " + group);
  }
}
