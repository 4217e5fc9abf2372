package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.CandidateScore;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.testkit.vllm.KvEventEncoder;
import dev.kinference.testkit.vllm.KvEventEncoder.Group;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The router credits a prefix found in an endpoint's CPU offload tier at its reload cost: cheaper than recomputing
 * it, dearer than a GPU hit. Events are encoded as vLLM encodes them (msgpack, both layouts), decoded, and applied
 * by the KV-cache groups as the subscriber applies them; the decision comes from the core router.
 */
class OffloadTierCreditTest {

  static final String MODEL = "qwen3-8b";
  static final int BLOCK = 16;
  static final int GPU_BLOCKS = 10;
  static final Group FULL = new Group(0, "full_attention", 0);
  /** Slow enough that the reload is plain in the prediction, far faster than the cold-start prefill rate. */
  static final double RELOAD_TOKENS_PER_SECOND = 100_000;

  final AtomicLong clock = new AtomicLong(10_000_000_000L);
  final KvEventDecoder decoder = new KvEventDecoder();
  final HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());
  final Map<String, KvCacheGroups> groups = new HashMap<>();
  Router router;
  KvEventEncoder enc;

  void setUp(KvEventEncoder.Layout layout) {
    enc = KvEventEncoder.of(layout);
    List<Endpoint> endpoints = new ArrayList<>();
    for (String id : List.of("gpu-and-cpu", "gpu-head", "gpu-all", "cold")) {
      endpoints.add(Endpoint.of(id, "http://127.0.0.1:1/" + id, MODEL));
    }
    router = Router.builder().endpoints(endpoints).cacheIndex(index).ticker(clock::get)
        .random(new SplittableRandom(7)).build();
    for (EndpointState e : router.fleet().endpoints()) {
      e.updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()));
      KvCacheGroups g = new KvCacheGroups(MODEL, RELOAD_TOKENS_PER_SECOND);
      groups.put(e.id(), g);
      index.register(e, g.hybrid());
      e.attachOffloadTier(g.offloaded()); // as KvEventSubscriber.start does
    }
  }

  EndpointState state(String id) {
    return Objects.requireNonNull(router.fleet().get(id));
  }

  /** One batch through vLLM's encoding, the decoder and the groups, as the subscriber applies it. */
  void publish(String endpoint, KvEvent... events) {
    List<Group> tags = new ArrayList<>();
    for (int i = 0; i < events.length; i++) {
      tags.add(FULL);
    }
    KvEventBatch batch = decoder.decode(enc.encode(1.0, List.of(events), tags, 0));
    EndpointState e = state(endpoint);
    Objects.requireNonNull(groups.get(endpoint)).apply(batch, index, e,
        () -> index.onEvent(e, new KvEvent.AllBlocksCleared()));
  }

  static long hash(String endpoint, int block) {
    return 0xF000_0000_0000_0000L + endpoint.hashCode() * 1_000_003L + block; // above 2^63, as vLLM's often are
  }

  static long[] hashes(String endpoint, int from, int to) {
    long[] h = new long[to - from];
    for (int b = from; b < to; b++) {
      h[b - from] = hash(endpoint, b);
    }
    return h;
  }

  /** vLLM's {@code BlockStored} of blocks {@code [from, to)} of the prompt, self-describing (tokens, parent). */
  static KvEvent stored(String endpoint, int[] tokens, int from, int to, KvEvent.Medium medium) {
    return new KvEvent.BlockStored(hashes(endpoint, from, to), from == 0 ? null : hash(endpoint, from - 1),
        Arrays.copyOfRange(tokens, from * BLOCK, to * BLOCK), BLOCK, null, medium, null);
  }

  /** The offloading connector's placeholder form: the hashes only, no parent, no tokens. */
  static KvEvent placeholder(String endpoint, int from, int to) {
    return new KvEvent.BlockStored(hashes(endpoint, from, to), null, new int[0], BLOCK, null, KvEvent.Medium.CPU,
        null);
  }

  static CandidateScore candidate(RoutingDecision d, String id) {
    return d.breakdown().stream().filter(c -> c.endpoint().id().equals(id)).findFirst().orElseThrow();
  }

  InferenceRequest request() {
    StringBuilder text = new StringBuilder("Read this document.");
    SplittableRandom r = new SplittableRandom(3);
    for (int i = 0; i < 1500; i++) {
      text.append(' ').append((char) ('a' + r.nextInt(26))).append((char) ('a' + r.nextInt(26)));
    }
    return InferenceRequest.builder(MODEL).system(text.toString()).user("Summarise it.").build();
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void aCpuTierHitIsCheaperThanRecomputingAndDearerThanAGpuHit(KvEventEncoder.Layout layout) throws Exception {
    setUp(layout);
    InferenceRequest request = request();
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    int[] tokens = prompt.tokens();
    int blocks = prompt.tokenCount() / BLOCK;
    publish("gpu-and-cpu", stored("gpu-and-cpu", tokens, 0, GPU_BLOCKS, KvEvent.Medium.GPU),
        stored("gpu-and-cpu", tokens, GPU_BLOCKS, blocks, KvEvent.Medium.CPU));
    publish("gpu-head", stored("gpu-head", tokens, 0, GPU_BLOCKS, KvEvent.Medium.GPU));
    publish("gpu-all", stored("gpu-all", tokens, 0, blocks, KvEvent.Medium.GPU));

    RoutingDecision d = router.route(request);
    CandidateScore tiered = candidate(d, "gpu-and-cpu");
    CandidateScore head = candidate(d, "gpu-head");
    CandidateScore all = candidate(d, "gpu-all");
    CandidateScore cold = candidate(d, "cold");
    assertThat(tiered.cachedTokens()).as("GPU and CPU blocks both serve the prefix").isEqualTo(all.cachedTokens())
        .isEqualTo(Math.min(blocks * BLOCK, prompt.tokenCount() - 1));
    assertThat(head.cachedTokens()).isEqualTo(GPU_BLOCKS * BLOCK);
    assertThat(all.predictedTtftSeconds()).isLessThan(tiered.predictedTtftSeconds());
    assertThat(tiered.predictedTtftSeconds()).isLessThan(head.predictedTtftSeconds());
    assertThat(head.predictedTtftSeconds()).isLessThan(cold.predictedTtftSeconds());
    int offloaded = tiered.cachedTokens() - GPU_BLOCKS * BLOCK;
    assertThat(tiered.predictedTtftSeconds() - all.predictedTtftSeconds()).as("the reload of the CPU blocks")
        .isCloseTo(offloaded / RELOAD_TOKENS_PER_SECOND, within(1e-9));
    assertThat(d.endpoint().id()).isEqualTo("gpu-all");
    assertThat(index.delegate().entryCount()).as("CPU blocks never enter the GPU index")
        .isEqualTo(GPU_BLOCKS * 2L + blocks);
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void placeholderOffloadEventsAreKeyedThroughTheGpuBlocksOfTheSameHash(KvEventEncoder.Layout layout)
      throws Exception {
    setUp(layout);
    InferenceRequest request = request();
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    int blocks = prompt.tokenCount() / BLOCK;
    String id = "gpu-and-cpu";
    // write-through: the connector stores each block as it is computed, while the GPU holds it; later the GPU evicts
    publish(id, stored(id, prompt.tokens(), 0, blocks, KvEvent.Medium.GPU), placeholder(id, 0, blocks));
    publish(id, new KvEvent.BlockRemoved(hashes(id, GPU_BLOCKS, blocks), KvEvent.Medium.GPU));
    RoutingDecision d = router.route(request);
    assertThat(candidate(d, id).cachedTokens()).isEqualTo(Math.min(blocks * BLOCK, prompt.tokenCount() - 1));
    d.reportFinished(dev.kinference.routing.Usage.UNKNOWN);

    // the CPU tier evicts the middle: the credit stops where the tier's run of blocks stops
    publish(id, new KvEvent.BlockRemoved(hashes(id, 20, 21), KvEvent.Medium.CPU));
    RoutingDecision after = router.route(request);
    assertThat(candidate(after, id).cachedTokens()).isEqualTo(20 * BLOCK);
    after.reportFinished(dev.kinference.routing.Usage.UNKNOWN);

    publish(id, new KvEvent.AllBlocksCleared());
    RoutingDecision cleared = router.route(request);
    assertThat(candidate(cleared, id).cachedTokens()).isZero();
    assertThat(groups.get(id).offloaded().blockCount()).isZero();
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void anEndpointWhoseTierIsNotCreditedCountsItsGpuHitOnly(KvEventEncoder.Layout layout) throws Exception {
    setUp(layout);
    InferenceRequest request = request();
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    int blocks = prompt.tokenCount() / BLOCK;
    publish("gpu-and-cpu", stored("gpu-and-cpu", prompt.tokens(), 0, GPU_BLOCKS, KvEvent.Medium.GPU),
        stored("gpu-and-cpu", prompt.tokens(), GPU_BLOCKS, blocks, KvEvent.Medium.CPU));
    state("gpu-and-cpu").attachOffloadTier(null);
    RoutingDecision d = router.route(request);
    assertThat(candidate(d, "gpu-and-cpu").cachedTokens()).isEqualTo(GPU_BLOCKS * BLOCK);
    assertThat(groups.get("gpu-and-cpu").otherTierBlocks()).isEqualTo(blocks - GPU_BLOCKS);
  }
}
