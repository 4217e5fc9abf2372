package dev.kinference.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * A model with a sliding-window KV-cache group beside full attention (gpt-oss-20b's shape, a 128-token window, so
 * 8 blocks of 16 tokens): the window group frees the blocks behind the window while a request runs, its freed blocks
 * are evicted first, and a prefix hit reaches only as far as both groups can reuse it, as vLLM's hybrid coordinator
 * decides; each group's blocks are published as events of that group.
 */
class SlidingWindowGroupTest {

  final List<EngineStepEvents> batches = new ArrayList<>();
  final Map<String, RequestOutcome> outcomes = new HashMap<>();
  final RequestListener recorder = new RequestListener() {
    @Override
    public void onFinished(RequestOutcome outcome) {
      outcomes.put(outcome.requestId(), outcome);
    }
  };

  /** 60 usable blocks of 16 tokens, 64-token prefill chunks. */
  SimEngine engine() {
    return SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.GPT_OSS_20B).numGpuBlocks(61)
        .maxNumBatchedTokens(64).maxNumSeqs(4).kvEventListener(batches::add).build();
  }

  static int[] tokens(int seed, int n) {
    Random r = new Random(seed);
    return IntStream.range(0, n).map(i -> r.nextInt(1 << 30)).toArray();
  }

  static int inUse(SimEngine engine) {
    return engine.pool().numBlocks() - 1 - engine.pool().freeCount();
  }

  /** The prompt's first {@code blocks} blocks and one token more (so all of them may hit). */
  static int[] probe(int[] prompt, int blocks) {
    int[] p = Arrays.copyOf(prompt, blocks * 16 + 1);
    p[blocks * 16] = 7;
    return p;
  }

  List<Long> hashes(int group, Class<? extends KvEvent> type) {
    List<Long> out = new ArrayList<>();
    for (EngineStepEvents b : batches) {
      for (int i = 0; i < b.events().size(); i++) {
        KvEvent e = b.events().get(i);
        if (b.group(i) == group && type.isInstance(e)) {
          long[] h = e instanceof KvEvent.BlockStored s ? s.blockHashes() : ((KvEvent.BlockRemoved) e).blockHashes();
          Arrays.stream(h).forEach(out::add);
        }
      }
    }
    return out;
  }

  @Test
  void theWindowGroupFreesBlocksBehindTheWindowAndAHitReachesOnlyAsFarAsBothGroupsReuseIt() {
    SimEngine engine = engine();
    int[] a = tokens(1, 320); // 20 blocks
    engine.submit(SimRequest.of("a", a, 1), recorder);
    int peak = 0;
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
      peak = Math.max(peak, inUse(engine));
    }
    // 20 full-attention blocks, and of the window group's 20 the 8 behind the window were freed along the way
    assertThat(peak).isEqualTo(32);
    long[] engineHashes = engine.engineHashes(a, null, null);
    assertThat(hashes(0, KvEvent.BlockStored.class)).containsExactlyElementsOf(
        Arrays.stream(engineHashes).boxed().toList());
    assertThat(hashes(1, KvEvent.BlockStored.class)).containsExactlyElementsOf(
        Arrays.stream(engineHashes).boxed().toList());

    // b takes the 20 never-used blocks, then the window group's 8 early blocks of a (freed first, evicted first)
    engine.submit(SimRequest.of("b", tokens(2, 224), 1), recorder);
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
    assertThat(hashes(1, KvEvent.BlockRemoved.class)).containsExactlyInAnyOrderElementsOf(
        Arrays.stream(engineHashes, 0, 8).boxed().toList());
    assertThat(hashes(0, KvEvent.BlockRemoved.class)).isEmpty();
    assertThat(engine.pool().cachedHashes(0)).containsAll(Arrays.stream(engineHashes).boxed().toList());

    // all 20 blocks: the window group holds the last 8, so the whole prefix hits
    assertThat(engine.cachedPrefixTokens(probe(a, 20), null, null)).isEqualTo(320);
    // 16 blocks: the window group holds blocks 8-15, the 8 before the hit's end
    assertThat(engine.cachedPrefixTokens(probe(a, 16), null, null)).isEqualTo(256);
    // 10 blocks: full attention holds them, but the window group holds only blocks 8-9 of the 8 it needs, and not
    // block 0 either, so nothing is reusable
    assertThat(engine.cachedPrefixTokens(probe(a, 10), null, null)).isZero();

    // the engine uses what it predicts (one at a time: c's new blocks would evict a's full-attention blocks)
    engine.submit(SimRequest.of("d", probe(a, 20), 1), recorder);
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
    assertThat(outcomes.get("d").cachedTokens()).isEqualTo(320);
    assertThat(engine.cachedPrefixTokens(probe(a, 10), null, null)).isZero();
    engine.submit(SimRequest.of("c", probe(a, 10), 1), recorder);
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
    assertThat(outcomes.get("c").cachedTokens()).isZero();
  }

  @Test
  void aModelWhoseSlidingLayersAreNotHalfItsKvLayersIsRejected() {
    assertThatThrownBy(() -> new ModelSpec("gemma-like", 6, 6, 1024, 8, 4, 128, 4096, 1000, 1e9, 1e9, Dtype.BF16,
        2e9, Dtype.BF16, 8192, 0, 5, 512, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("half of the KV layers");
    assertThatThrownBy(() -> SimEngine.builder().model(ModelSpec.GPT_OSS_20B).cpuOffloadBytes(1L << 30).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not modelled");
  }

  @Test
  void theModelIsSelectableByNameAndTakesHalfThePageOfEachGroup() {
    assertThat(ModelSpec.named("gpt-oss-20b")).isSameAs(ModelSpec.GPT_OSS_20B);
    assertThat(ModelSpec.GPT_OSS_20B.kvCacheGroups()).isEqualTo(2);
    // 2 (K, V) x 24 layers x 8 heads x 64 x 2 bytes, half of it in each group's block
    assertThat(ModelSpec.GPT_OSS_20B.kvBytesPerToken()).isEqualTo(49_152);
    assertThat(ModelSpec.GPT_OSS_20B.kvBytesPerTokenPerGroup()).isEqualTo(24_576);
  }
}
