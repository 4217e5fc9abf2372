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

/** The engine's CPU offload tier: write-through stores, reloads before scheduling, LRU eviction, and its events. */
class CpuOffloadTierTest {

  static final long BYTES_PER_BLOCK = 16L * ModelSpec.QWEN3_8B.kvBytesPerToken();

  final List<StepRecord> steps = new ArrayList<>();
  final List<EngineStepEvents> batches = new ArrayList<>();
  final Map<String, RequestOutcome> outcomes = new HashMap<>();
  final Map<String, Long> firstTokens = new HashMap<>();

  final RequestListener recorder = new RequestListener() {
    @Override
    public void onFirstToken(String requestId, long nanos) {
      firstTokens.put(requestId, nanos);
    }

    @Override
    public void onFinished(RequestOutcome outcome) {
      outcomes.put(outcome.requestId(), outcome);
    }
  };

  /** 40 usable GPU blocks of 16 tokens; a CPU tier of {@code cpuBlocks} blocks (0: none). */
  SimEngine engine(int cpuBlocks) {
    SimEngineBuilder b = SimEngine.builder().gpu(GpuSpec.L40S).model(ModelSpec.QWEN3_8B).numGpuBlocks(41)
        .maxNumBatchedTokens(256).maxNumSeqs(8).stepObserver(steps::add).kvEventListener(batches::add);
    if (cpuBlocks > 0) {
      b.cpuOffloadBytes(cpuBlocks * BYTES_PER_BLOCK);
    }
    return b.build();
  }

  static int[] tokens(int seed, int n) {
    Random r = new Random(seed);
    return IntStream.range(0, n).map(i -> r.nextInt(1 << 30)).toArray();
  }

  static void runToIdle(SimEngine engine) {
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
  }

  List<KvEvent> events(KvEvent.Medium medium) {
    List<KvEvent> out = new ArrayList<>();
    for (EngineStepEvents b : batches) {
      for (KvEvent e : b.events()) {
        KvEvent.Medium m = switch (e) {
          case KvEvent.BlockStored s -> s.medium();
          case KvEvent.BlockRemoved r -> r.medium();
          case KvEvent.AllBlocksCleared c -> null;
        };
        if (m == medium) {
          out.add(e);
        }
      }
    }
    return out;
  }

  /** Serves {@code doc} once, then three other documents that push it out of the 40 GPU blocks, then {@code doc}. */
  long ttftOfTheReturningDocument(SimEngine engine, int[] doc) {
    engine.submit(SimRequest.of("first", doc, 1), recorder);
    runToIdle(engine);
    for (int i = 0; i < 3; i++) {
      engine.submit(SimRequest.of("other-" + i, tokens(100 + i, 400), 1), recorder);
      runToIdle(engine);
    }
    assertThat(engine.cachedPrefixTokens(doc, null, null)).as("evicted from the GPU").isZero();
    steps.clear();
    long submitted = engine.now();
    engine.submit(SimRequest.of("again", doc, 1), recorder);
    runToIdle(engine);
    return firstTokens.get("again") - submitted;
  }

  @Test
  void aPrefixEvictedFromTheGpuIsReloadedFromTheCpuTierFasterThanRecomputed() {
    int[] doc = tokens(1, 400); // 25 blocks
    SimEngine withTier = engine(1000);
    long reloaded = ttftOfTheReturningDocument(withTier, doc);
    RequestOutcome again = outcomes.get("again");
    assertThat(again.cachedTokens()).as("24 whole blocks loaded: vLLM computes the last token itself").isEqualTo(384);
    assertThat(steps.get(0).scheduledTokens()).as("only the tail is prefilled").containsEntry("again", 16);
    assertThat(withTier.cachedPrefixTokens(doc, null, null)).as("the loaded blocks are cached on the GPU again")
        .isEqualTo(384);

    outcomes.clear();
    SimEngine withoutTier = engine(0);
    long recomputed = ttftOfTheReturningDocument(withoutTier, doc);
    assertThat(outcomes.get("again").cachedTokens()).isZero();
    assertThat(reloaded).isLessThan(recomputed);
    // the load takes 384 tokens' KV over one L40S's PCIe Gen4 link (80% of 32 GB/s)
    double loadSeconds = 384.0 * ModelSpec.QWEN3_8B.kvBytesPerToken() / (32e9 * 0.8);
    assertThat(reloaded * 1e-9).isGreaterThan(loadSeconds);
  }

  @Test
  void everyComputedBlockIsStoredOnceWithItsTokensAndMediumCpu() {
    SimEngine engine = engine(1000);
    int[] doc = tokens(2, 100); // 6 full blocks once the first output token is cached
    engine.submit(SimRequest.of("a", doc, 20), recorder);
    runToIdle(engine);
    engine.submit(SimRequest.of("b", doc, 1), recorder);
    runToIdle(engine);
    long[] hashes = engine.engineHashes(Arrays.copyOf(doc, 96), null, null);
    List<Long> stored = new ArrayList<>();
    for (KvEvent e : events(KvEvent.Medium.CPU)) {
      KvEvent.BlockStored s = (KvEvent.BlockStored) e;
      assertThat(s.hasTokens()).isTrue();
      for (long h : s.blockHashes()) {
        stored.add(h);
      }
    }
    assertThat(stored).as("the GPU hit of b stores nothing again").startsWith(hashes[0], hashes[1], hashes[2],
        hashes[3], hashes[4], hashes[5]).doesNotHaveDuplicates();
    KvEvent.BlockStored firstStore = (KvEvent.BlockStored) events(KvEvent.Medium.CPU).get(0);
    assertThat(firstStore.parentBlockHash()).isNull();
    assertThat(firstStore.tokenIds()).startsWith(Arrays.copyOf(doc, 16));
  }

  @Test
  void aFullTierEvictsItsLeastRecentlyUsedBlockWithABlockRemoved() {
    SimEngine engine = engine(10);
    assertThat(engine.offloadTier()).isNotNull();
    engine.submit(SimRequest.of("a", tokens(3, 160), 1), recorder); // 10 blocks fill the tier
    runToIdle(engine);
    long[] a = engine.engineHashes(tokens(3, 160), null, null);
    assertThat(events(KvEvent.Medium.CPU)).noneMatch(e -> e instanceof KvEvent.BlockRemoved);
    engine.submit(SimRequest.of("b", tokens(4, 48), 1), recorder); // 3 more: a's first three go
    runToIdle(engine);
    List<Long> removed = new ArrayList<>();
    for (KvEvent e : events(KvEvent.Medium.CPU)) {
      if (e instanceof KvEvent.BlockRemoved r) {
        removed.add(r.blockHashes()[0]);
      }
    }
    assertThat(removed).containsExactly(a[0], a[1], a[2]);
    assertThat(java.util.Objects.requireNonNull(engine.offloadTier()).size()).isEqualTo(10);
  }

  @Test
  void aRestartEmptiesTheTierWithoutEvents() {
    SimEngine engine = engine(1000);
    engine.submit(SimRequest.of("a", tokens(5, 160), 1), recorder);
    runToIdle(engine);
    batches.clear();
    engine.restart();
    assertThat(java.util.Objects.requireNonNull(engine.offloadTier()).size()).isZero();
    assertThat(batches).isEmpty();
  }

  @Test
  void aTierTooSmallForOneBlockIsRefusedNamingItsSize() {
    assertThatThrownBy(() -> SimEngine.builder().model(ModelSpec.QWEN3_8B).cpuOffloadBytes(BYTES_PER_BLOCK - 1)
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holds no block");
    assertThatThrownBy(() -> SimEngine.builder().cpuOffloadBytes(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cpuOffloadBytes");
  }
}
