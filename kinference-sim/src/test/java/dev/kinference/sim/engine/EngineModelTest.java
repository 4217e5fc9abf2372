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

class EngineModelTest {

  private final List<StepRecord> steps = new ArrayList<>();
  private final List<EngineStepEvents> batches = new ArrayList<>();
  private final Map<String, RequestOutcome> outcomes = new HashMap<>();

  private SimEngineBuilder small(int blocks) {
    return SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B).numGpuBlocks(blocks)
        .maxNumBatchedTokens(256).maxNumSeqs(8).stepObserver(steps::add).kvEventListener(batches::add);
  }

  private final RequestListener recorder = new RequestListener() {
    @Override
    public void onFinished(RequestOutcome outcome) {
      outcomes.put(outcome.requestId(), outcome);
    }
  };

  private static int[] tokens(int seed, int n) {
    Random r = new Random(seed);
    return IntStream.range(0, n).map(i -> r.nextInt(1 << 30)).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static void runToIdle(SimEngine engine) {
    while (engine.nextEventNanos() != Long.MAX_VALUE) {
      engine.advanceTo(engine.nextEventNanos());
    }
  }

  @Test
  void prefixHitReducesPrefillExactlyByTheCachedBlocks() {
    SimEngine engine = small(1000).build();
    int[] shared = tokens(1, 80); // 5 full blocks
    int[] a = concat(shared, tokens(2, 20));
    int[] b = concat(shared, tokens(3, 37));
    engine.submit(SimRequest.of("a", a, 4), recorder);
    runToIdle(engine);
    steps.clear();
    engine.submit(SimRequest.of("b", b, 4), recorder);
    runToIdle(engine);

    StepRecord first = steps.get(0);
    assertThat(first.cachedTokensOnAdmission()).containsEntry("b", 80);
    assertThat(first.scheduledTokens()).containsEntry("b", 117 - 80);
    assertThat(first.prefillTokens()).isEqualTo(37);
    StepCostModel cost = engine.costModel();
    long expected = Math.round(cost.stepSeconds(1, 37, 117, 37 * (80 + 19.0)) * 1e9);
    assertThat(first.endNanos() - first.startNanos()).isEqualTo(expected);
    assertThat(outcomes.get("b").cachedTokens()).isEqualTo(80);
    assertThat(outcomes.get("a").cachedTokens()).isZero();
  }

  @Test
  void aFullHitStillComputesTheLastToken() {
    SimEngine engine = small(1000).build();
    int[] p = tokens(5, 96); // exactly 6 blocks
    engine.submit(SimRequest.of("a", p, 2), recorder);
    runToIdle(engine);
    steps.clear();
    engine.submit(SimRequest.of("again", p, 2), recorder);
    runToIdle(engine);
    // at most prompt - 1 tokens come from the cache, in whole blocks: 5 blocks, 16 tokens recomputed
    assertThat(steps.get(0).cachedTokensOnAdmission()).containsEntry("again", 80);
    assertThat(steps.get(0).scheduledTokens()).containsEntry("again", 16);
    assertThat(engine.cachedPrefixTokens(p, null, null)).isEqualTo(80);
  }

  @Test
  void loraAndCacheSaltSeparateTheCache() {
    SimEngine engine = small(1000).build();
    int[] p = tokens(6, 64);
    engine.submit(new SimRequest("base", p, 1, null, null, null), recorder);
    runToIdle(engine);
    engine.submit(new SimRequest("lora", p, 1, null, "adapter", null), recorder);
    engine.submit(new SimRequest("salted", p, 1, null, null, "tenant-a"), recorder);
    runToIdle(engine);
    assertThat(outcomes.get("lora").cachedTokens()).isZero();
    assertThat(outcomes.get("salted").cachedTokens()).isZero();
    assertThat(engine.cachedPrefixTokens(p, null, null)).isEqualTo(48);
    assertThat(engine.cachedPrefixTokens(p, "adapter", null)).isEqualTo(48);
  }

  @Test
  void finishedRequestsAreEvictedLeastRecentlyFreedFirstAndTailFirst() {
    // 1 null block + 12 usable. Each request: 63-token prompt + 1 output = 4 blocks, 3 of them full and cached.
    SimEngine engine = small(13).build();
    int[] a = tokens(10, 63);
    int[] b = tokens(11, 63);
    engine.submit(SimRequest.of("a", a, 1), recorder);
    runToIdle(engine);
    engine.submit(SimRequest.of("b", b, 1), recorder);
    runToIdle(engine);
    long[] ha = engine.engineHashes(a, null, null);
    long[] hb = engine.engineHashes(b, null, null);
    batches.clear();
    // A 12-block request must evict everything: never-used blocks first, then a's tail to head, then b's.
    engine.submit(SimRequest.of("big", tokens(12, 191), 1), recorder);
    runToIdle(engine);
    List<Long> removed = new ArrayList<>();
    for (EngineStepEvents batch : batches) {
      for (KvEvent e : batch.events()) {
        if (e instanceof KvEvent.BlockRemoved r) {
          assertThat(r.blockHashes()).hasSize(1);
          removed.add(r.blockHashes()[0]);
        }
      }
    }
    assertThat(removed).containsExactly(ha[2], ha[1], ha[0], hb[2], hb[1], hb[0]);
  }

  @Test
  void aPrefixHitProtectsItsBlocksFromEviction() {
    SimEngine engine = small(13).build();
    int[] a = tokens(20, 63);
    int[] b = tokens(21, 63);
    engine.submit(SimRequest.of("a", a, 1), recorder);
    runToIdle(engine);
    engine.submit(SimRequest.of("b", b, 1), recorder);
    runToIdle(engine);
    // reusing a makes its blocks the most recently freed
    engine.submit(SimRequest.of("a2", a, 1), recorder);
    runToIdle(engine);
    batches.clear();
    // 8 blocks: 3 never used, the two partial (unhashed) last blocks of a and b, then b's 3 cached blocks
    engine.submit(SimRequest.of("mid", tokens(22, 120), 1), recorder);
    runToIdle(engine);
    assertThat(engine.cachedPrefixTokens(a, null, null)).isEqualTo(48);
    assertThat(engine.cachedPrefixTokens(b, null, null)).isZero();
  }

  @Test
  void preemptionRecomputesAndTheRequestStillCompletes() {
    // 1 + 10 blocks; two requests of 40-token prompts generating 100 tokens each need 9 blocks each at the end.
    SimEngine engine = small(11).build();
    engine.submit(SimRequest.of("first", tokens(30, 40), 100), recorder);
    engine.submit(SimRequest.of("second", tokens(31, 40), 100), recorder);
    runToIdle(engine);
    assertThat(steps.stream().flatMap(s -> s.preempted().stream())).contains("second");
    assertThat(outcomes.get("first").completionTokens()).isEqualTo(100);
    assertThat(outcomes.get("second").completionTokens()).isEqualTo(100);
    assertThat(outcomes.get("second").preemptions()).isPositive();
    assertThat(engine.metrics().preemptions()).isEqualTo(outcomes.get("second").preemptions());
    // the recompute found its own blocks still cached
    assertThat(steps.stream().filter(s -> s.cachedTokensOnAdmission().getOrDefault("second", 0) > 0)).isNotEmpty();
  }

  @Test
  void metricsAndKvEventsAgreeWithTheBlockPoolAtEveryStep() {
    Map<Long, Integer> replica = new HashMap<>();
    List<String> problems = new ArrayList<>();
    long[] admittedHitTokens = {0};
    long[] steps = {0};
    int[] submitted = {0};
    SimEngine[] holder = new SimEngine[1];
    SimEngine engine = SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B).numGpuBlocks(60)
        .maxNumBatchedTokens(128).maxNumSeqs(6).kvEventListener(batch -> {
          for (KvEvent e : batch.events()) {
            switch (e) {
              case KvEvent.BlockStored s -> {
                for (long h : s.blockHashes()) {
                  replica.merge(h, 1, Integer::sum);
                }
              }
              case KvEvent.BlockRemoved r -> {
                for (long h : r.blockHashes()) {
                  replica.merge(h, -1, Integer::sum);
                  replica.remove(h, 0);
                }
              }
              case KvEvent.AllBlocksCleared c -> replica.clear();
            }
          }
          BlockPool pool = holder[0].pool();
          if (!replica.keySet().equals(pool.cachedHashes())) {
            problems.add("events disagree with the pool after batch " + batch.sequence());
          }
          int copies = replica.values().stream().mapToInt(Integer::intValue).sum();
          if (copies != pool.cachedBlockCount()) {
            problems.add("event copies " + copies + " != cached blocks " + pool.cachedBlockCount());
          }
          EngineMetrics m = holder[0].metrics();
          if (Math.abs(m.kvCacheUsage() - (1 - (double) pool.freeCount() / 59)) > 1e-12) {
            problems.add("usage disagrees");
          }
          if (m.cachedBlocks() != pool.cachedBlockCount()) {
            problems.add("cached-block gauge " + m.cachedBlocks() + " != pool " + pool.cachedBlockCount());
          }
        }).stepObserver(step -> {
          // Every scheduled step, whether or not it changed the pool. The queues against the test's own count of
          // requests submitted and finished; the hit counter against the hits each step reports at admission
          // (counted again after a preemption, as vLLM counts them); usage against the free blocks it reports.
          admittedHitTokens[0] += step.cachedTokensOnAdmission().values().stream().mapToLong(Integer::longValue).sum();
          steps[0]++;
          EngineMetrics m = holder[0].metrics();
          if (m.waiting() + m.running() != submitted[0] - outcomes.size()) {
            problems.add("queues " + m.waiting() + " + " + m.running() + " != submitted " + submitted[0]
                + " - finished " + outcomes.size());
          }
          if (m.running() > 6 || step.scheduledTokens().size() > m.running()) {
            problems.add("batch " + step.scheduledTokens().size() + " of " + m.running() + " running");
          }
          if (Math.abs(m.kvCacheUsage() - (1 - (double) step.freeBlocks() / 59)) > 1e-12) {
            problems.add("usage disagrees with the step's free blocks");
          }
          if (m.prefixCacheHits() != admittedHitTokens[0]) {
            problems.add("hit counter " + m.prefixCacheHits() + " != hits at admission " + admittedHitTokens[0]);
          }
        }).build();
    holder[0] = engine;
    Random random = new Random(42);
    int[][] prefixes = {tokens(40, 48), tokens(41, 80), tokens(42, 20)};
    long t = 0;
    for (int i = 0; i < 300; i++) {
      t += (long) (random.nextDouble() * 20e6);
      engine.advanceTo(t);
      int[] prompt = concat(prefixes[random.nextInt(3)], tokens(1000 + i, 1 + random.nextInt(60)));
      submitted[0]++;
      engine.submit(SimRequest.of("r" + i, prompt, 1 + random.nextInt(40)), recorder);
      EngineMetrics m = engine.metrics();
      assertThat(m.waiting()).isEqualTo(engine.waitingCount());
      assertThat(m.running()).isLessThanOrEqualTo(6);
      assertThat(m.prefixCacheHits()).isLessThanOrEqualTo(m.prefixCacheQueries());
    }
    runToIdle(engine);
    assertThat(problems).isEmpty();
    assertThat(steps[0]).isEqualTo(engine.metrics().steps());
    assertThat(outcomes).hasSize(300);
    assertThat(engine.metrics().requestSuccess().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(300);
    assertThat(engine.metrics().ttft().count()).isEqualTo(300);
    assertThat(engine.metrics().prefixCacheHits()).isPositive();
    assertThat(engine.metrics().kvCacheUsage()).isZero();
  }

  @Test
  void blockStoredEventsChainParentsAndCarryTheTokens() {
    SimEngine engine = small(1000).build();
    int[] p = tokens(50, 40);
    engine.submit(SimRequest.of("a", p, 30), recorder);
    runToIdle(engine);
    List<KvEvent.BlockStored> stored = batches.stream().flatMap(b -> b.events().stream())
        .filter(KvEvent.BlockStored.class::isInstance).map(KvEvent.BlockStored.class::cast).toList();
    // prompt: 2 full blocks at once; then decode fills blocks 3 and 4 (tokens 48 and 64 reached)
    assertThat(stored.get(0).blockHashes()).hasSize(2);
    assertThat(stored.get(0).parentBlockHash()).isNull();
    assertThat(stored.get(0).tokenIds()).containsExactly(Arrays.copyOf(p, 32));
    assertThat(stored.get(1).parentBlockHash()).isEqualTo(stored.get(0).blockHashes()[1]);
    assertThat(stored).allSatisfy(s -> assertThat(s.blockSize()).isEqualTo(16));
    assertThat(batches.get(0).sequence()).isZero();
    assertThat(batches.get(batches.size() - 1).sequence()).isEqualTo(batches.size() - 1);
  }

  @Test
  void abortFreesTheRequestAndTellsItsListener() {
    SimEngine engine = small(1000).build();
    engine.submit(SimRequest.of("long", tokens(60, 100), 1000), recorder);
    engine.advanceTo(engine.nextEventNanos());
    engine.advanceTo(engine.nextEventNanos() + 50_000_000);
    assertThat(engine.abort("long")).isTrue();
    assertThat(engine.abort("long")).isFalse();
    assertThat(outcomes.get("long").reason()).isEqualTo(FinishReason.ABORT);
    assertThat(engine.metrics().running()).isZero();
    assertThat(engine.metrics().kvCacheUsage()).isZero();
    runToIdle(engine);
  }

  @Test
  void restartEndsEverythingAndRenumbersEvents() {
    SimEngine engine = small(1000).build();
    engine.submit(SimRequest.of("x", tokens(70, 50), 10), recorder);
    runToIdle(engine);
    engine.submit(SimRequest.of("y", tokens(71, 50), 1000), recorder);
    engine.advanceTo(engine.nextEventNanos());
    assertThat(batches).isNotEmpty();
    engine.restart();
    assertThat(outcomes.get("y").reason()).isEqualTo(FinishReason.ABORT);
    assertThat(engine.metrics().generationTokens()).isZero();
    assertThat(engine.metrics().cachedBlocks()).isZero();
    batches.clear();
    engine.submit(SimRequest.of("z", tokens(72, 50), 2), recorder);
    runToIdle(engine);
    assertThat(batches.get(0).sequence()).isZero();
    assertThat(outcomes.get("z").cachedTokens()).isZero();
  }

  @Test
  void resetPrefixCachePublishesAllBlocksClearedOnlyWhenIdle() {
    SimEngine engine = small(1000).build();
    engine.submit(SimRequest.of("x", tokens(80, 50), 10), recorder);
    engine.advanceTo(engine.nextEventNanos());
    assertThat(engine.resetPrefixCache()).isFalse();
    runToIdle(engine);
    batches.clear();
    assertThat(engine.resetPrefixCache()).isTrue();
    assertThat(batches).singleElement().satisfies(b ->
        assertThat(b.events()).containsExactly(new KvEvent.AllBlocksCleared()));
    assertThat(engine.cachedPrefixTokens(tokens(80, 50), null, null)).isZero();
  }

  @Test
  void scriptedOutputIsGeneratedAndCached() {
    SimEngine engine = small(1000).build();
    int[] prompt = tokens(90, 30);
    int[] answer = tokens(91, 20);
    List<Integer> got = new ArrayList<>();
    engine.submit(new SimRequest("chat", prompt, 100, answer, null, null), new RequestListener() {
      @Override
      public void onToken(String id, long nanos, int index, int tokenId) {
        got.add(tokenId);
      }

      @Override
      public void onFinished(RequestOutcome outcome) {
        outcomes.put(id(), outcome);
      }

      private String id() {
        return "chat";
      }
    });
    runToIdle(engine);
    assertThat(got).containsExactly(Arrays.stream(answer).boxed().toArray(Integer[]::new));
    assertThat(outcomes.get("chat").reason()).isEqualTo(FinishReason.STOP);
    // the next turn's prompt starts with prompt + answer: 49 computed tokens = 3 full blocks are cached
    int[] next = concat(concat(prompt, answer), tokens(92, 10));
    assertThat(engine.cachedPrefixTokens(next, null, null)).isEqualTo(48);
  }

  @Test
  void badRequestsAreRejectedAndChangeNothing() {
    SimEngine engine = small(20).maxModelLen(200).build();
    assertThatThrownBy(() -> engine.submit(SimRequest.of("big", tokens(1, 190), 20), recorder))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_model_len");
    engine.submit(SimRequest.of("ok", tokens(1, 10), 2), recorder);
    assertThatThrownBy(() -> engine.submit(SimRequest.of("ok", tokens(1, 10), 2), recorder))
        .hasMessageContaining("already active");
    assertThatThrownBy(() -> SimRequest.of("empty", new int[0], 2)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> engine.advanceTo(-1)).isInstanceOf(IllegalArgumentException.class);
    runToIdle(engine);
    assertThat(outcomes).containsOnlyKeys("ok");
  }

  @Test
  void aModelThatDoesNotFitIsRejected() {
    assertThatThrownBy(() -> SimEngine.builder().gpu(GpuSpec.L40S).model(ModelSpec.LLAMA_3_1_70B).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not fit");
  }
}
