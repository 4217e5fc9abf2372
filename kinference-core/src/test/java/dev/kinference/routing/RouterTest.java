package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.HybridGroups;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RouterTest {

  private static final String MODEL = "qwen3-8b";
  private final AtomicLong clock = new AtomicLong(10_000_000_000L);

  private static List<Endpoint> endpoints(int n) {
    List<Endpoint> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(Endpoint.of("e" + i, "http://127.0.0.1:" + (8000 + i), MODEL));
    }
    return list;
  }

  private Router.Builder builder(int n) {
    return Router.builder().endpoints(endpoints(n)).ticker(clock::get).random(new SplittableRandom(7));
  }

  private static EndpointState state(Router router, String id) {
    return Objects.requireNonNull(router.fleet().get(id));
  }

  private void scrapeAll(Router router, int waiting) {
    for (EndpointState e : router.fleet().endpoints()) {
      e.updateMetrics(EndpointMetrics.of(waiting, 0, 0.1, clock.get()));
    }
  }

  private static InferenceRequest chat(String system, String user) {
    return InferenceRequest.builder(MODEL).system(system).user(user).build();
  }

  private static String words(int seed, int count) {
    SplittableRandom r = new SplittableRandom(seed);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < count; i++) {
      sb.append(' ').append((char) ('a' + r.nextInt(26))).append((char) ('a' + r.nextInt(26)))
          .append((char) ('a' + r.nextInt(26)));
    }
    return sb.toString();
  }

  /** Teaches a precise index that {@code endpoint} holds the request's full prompt, as its KV events would. */
  private static void holds(Router router, String endpoint, InferenceRequest request) throws Exception {
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    int blocks = prompt.tokenCount() / 16;
    long[] hashes = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      hashes[i] = (endpoint.hashCode() * 1_000_003L) ^ (prompt.keys(16).key(i) * 31);
    }
    router.onKvEvent(endpoint, new KvEvent.BlockStored(hashes, null,
        java.util.Arrays.copyOf(prompt.tokens(), blocks * 16), 16, null, KvEvent.Medium.GPU, null));
  }

  @Test
  void routesToTheEndpointThatHoldsThePrefix() throws Exception {
    Router router = builder(3).cacheIndex(new PreciseCacheIndex()).build();
    scrapeAll(router, 0);
    String system = "You are a meticulous analyst." + words(1, 2000);
    holds(router, "e2", chat(system, "first question"));
    RoutingDecision d = router.route(chat(system, "a different question about the same document"));
    assertThat(d.endpoint().id()).isEqualTo("e2");
    assertThat(d.cachedPrefixTokens()).isGreaterThan(d.promptTokens() * 9 / 10);
    assertThat(d.alternates()).extracting(Endpoint::id).containsExactlyInAnyOrder("e0", "e1");
    assertThat(d.breakdown().get(0).scores()).containsKeys("predicted-ttft", "session-affinity");
    assertThat(d.explain()).startsWith("e2 cached=");
  }

  @Test
  void theApproximateIndexLearnsFromItsOwnDecisions() {
    Router router = builder(3).build();
    scrapeAll(router, 0);
    String system = "Shared policy document." + words(2, 1500);
    RoutingDecision first = router.route(chat(system, "q1"));
    first.reportFirstToken();
    first.reportFinished(Usage.UNKNOWN);
    for (int i = 0; i < 5; i++) {
      RoutingDecision d = router.route(chat(system, "follow-up " + i));
      assertThat(d.endpoint()).isEqualTo(first.endpoint());
      assertThat(d.cachedPrefixTokens()).isPositive();
      d.reportFirstToken();
      d.reportFinished(Usage.UNKNOWN);
    }
  }

  @Test
  void aBurstBetweenScrapesSpreadsInsteadOfPilingOntoOneServer() {
    Router router = builder(3).build();
    scrapeAll(router, 0);
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      RoutingDecision d = router.route(chat("sys", words(100 + i, 500)));
      counts.merge(d.endpoint().id(), 1, Integer::sum);
    }
    assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(8, 12));
    assertThat(router.fleet().endpoints()).allSatisfy(e -> assertThat(e.inFlight()).isBetween(8, 12));
  }

  @Test
  void identicalEndpointsShareLoadAtRandomInsteadOfHerding() {
    Router router = builder(4).build();
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 2000; i++) {
      RoutingDecision d = router.route(InferenceRequest.builder(MODEL).user("hi " + i).build());
      counts.merge(d.endpoint().id(), 1, Integer::sum);
      d.reportFinished(Usage.UNKNOWN);
    }
    assertThat(counts).hasSize(4);
    assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(400, 600));
  }

  @Test
  void endpointsWithStaleMetricsAreFilteredAndTheFilterFailsOpen() throws Exception {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    InferenceRequest request = chat("Long shared context." + words(3, 1000), "q");
    holds(router, "e1", request);
    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()));
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get() - Duration.ofSeconds(5).toNanos()));
    RoutingDecision d = router.route(request);
    assertThat(d.endpoint().id()).as("e1 holds the prefix but its metrics are 5 s old").isEqualTo("e0");
    assertThat(d.notes()).isEmpty();

    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get() - Duration.ofSeconds(5).toNanos()));
    RoutingDecision allStale = router.route(request);
    assertThat(allStale.endpoint().id()).isEqualTo("e1");
    assertThat(allStale.notes()).anySatisfy(n -> assertThat(n).contains("fresh-metrics failed open"));
  }

  @Test
  void endpointsNotYetScrapedAreNotPassedOverForTheFirstOneScraped() {
    Router router = builder(3).build();
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()));
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      RoutingDecision d = router.route(chat("s", "q" + i));
      counts.merge(d.endpoint().id(), 1, Integer::sum);
      assertThat(d.notes()).isEmpty();
    }
    assertThat(counts).as("requests in flight, spread by the router's own account").containsOnlyKeys("e0", "e1", "e2");
    assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(5, 15));
  }

  @Test
  void unhealthyEndpointsAreAvoidedAndDrainingOnesNeverChosen() {
    Router router = builder(3).build();
    scrapeAll(router, 0);
    state(router, "e0").updateHealth(Health.UNHEALTHY, "connection refused");
    for (int i = 0; i < 50; i++) {
      RoutingDecision d = router.route(chat("s", "q" + i));
      assertThat(d.endpoint().id()).isNotEqualTo("e0");
      d.reportFinished(Usage.UNKNOWN);
    }
    RoutingDecision inFlight = router.route(chat("s", "x"));
    String leaving = inFlight.endpoint().id();
    List<Endpoint> remaining = new ArrayList<>(endpoints(3));
    remaining.removeIf(e -> e.id().equals(leaving));
    router.fleet().setEndpoints(remaining);
    assertThat(inFlight.endpointState().health()).isEqualTo(Health.DRAINING);
    assertThat(router.fleet().draining()).extracting(EndpointState::id).containsExactly(leaving);
    for (int i = 0; i < 50; i++) {
      RoutingDecision d = router.route(chat("s", "y" + i));
      assertThat(d.endpoint().id()).isNotEqualTo(leaving);
      d.reportFinished(Usage.UNKNOWN);
    }
    inFlight.reportFinished(Usage.UNKNOWN);
    assertThat(router.fleet().draining()).isEmpty();
  }

  @Test
  void anUnknownModelIsA404NamingTheServedModels() {
    Router router = builder(2).build();
    assertThatThrownBy(() -> router.route(InferenceRequest.builder("gpt-9").user("x").build()))
        .isInstanceOfSatisfying(NoEndpointException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(404);
          assertThat(e.unknownModel()).isTrue();
          assertThat(e.getMessage()).contains("gpt-9").contains(MODEL);
        });
  }

  @Test
  void theRequestsAccountFollowsItsLifecycleExactlyOnce() {
    Router router = builder(2).build();
    RoutingDecision d = router.route(chat("s", words(4, 300)));
    EndpointState e = d.endpointState();
    assertThat(e.inFlight()).isEqualTo(1);
    assertThat(e.awaitingFirstToken()).isEqualTo(1);
    assertThat(e.pendingPrefillTokens()).isEqualTo(d.uncachedTokens());
    d.reportFirstToken();
    d.reportFirstToken();
    assertThat(e.awaitingFirstToken()).isZero();
    assertThat(e.pendingPrefillTokens()).isZero();
    assertThat(e.inFlight()).isEqualTo(1);
    d.reportFinished(new Usage(100, 0, 10));
    d.reportFailed();
    assertThat(e.inFlight()).isZero();
    assertThat(e.completedCount()).isEqualTo(1);
    assertThat(e.failedCount()).isZero();
  }

  @Test
  void aRetryMovesTheAccountToTheNextAlternate() {
    Router router = builder(3).build();
    RoutingDecision d = router.route(chat("s", "q"));
    EndpointState first = d.endpointState();
    RoutingDecision retry = Objects.requireNonNull(d.retryOnNextAlternate());
    assertThat(retry.endpoint()).isEqualTo(d.alternates().get(0));
    assertThat(first.inFlight()).isZero();
    assertThat(first.failedCount()).isEqualTo(1);
    assertThat(retry.endpointState().inFlight()).isEqualTo(1);
    RoutingDecision third = Objects.requireNonNull(retry.retryOnNextAlternate());
    assertThat(third.retryOnNextAlternate()).isNull();
    assertThat(router.fleet().endpoints()).allSatisfy(e -> assertThat(e.inFlight()).isZero());
  }

  @Test
  void aPreviewCountsNothing() {
    Router router = builder(2).build();
    RoutingDecision d = router.preview(chat("s", "q"));
    assertThat(router.fleet().endpoints()).allSatisfy(e -> assertThat(e.inFlight()).isZero());
    d.reportFinished(Usage.UNKNOWN);
    assertThat(router.fleet().endpoints()).allSatisfy(e -> assertThat(e.inFlight()).isZero());
  }

  @Test
  void theFirstTokenTeachesTheEndpointsPrefillRate() {
    Router router = builder(1).build();
    scrapeAll(router, 0);
    RoutingDecision d = router.route(chat("s", words(5, 4000)));
    EndpointState e = d.endpointState();
    double coldStart = router.ttftModel().coldStartPrefillRate();
    clock.addAndGet(Duration.ofMillis(4020).toNanos());
    d.reportFirstToken();
    assertThat(e.prefillRateSamples()).isEqualTo(1);
    double observed = d.uncachedTokens() / 4.0;
    double learned = e.prefillTokensPerSecond(coldStart);
    assertThat(learned).isLessThan(coldStart).isGreaterThan(observed);
  }

  @Test
  void endpointsServingAModelOnTheSameHardwareShareOneLearnedPrefillRate() {
    Router router = Router.builder().ticker(clock::get).random(new SplittableRandom(7))
        .endpoints(List.of(Endpoint.of("a", "http://127.0.0.1:8000", MODEL),
            Endpoint.of("b", "http://127.0.0.1:8001", MODEL),
            Endpoint.of("c", "http://127.0.0.1:8002", MODEL).withLabel(Endpoint.HARDWARE_LABEL, "1xL4")))
        .build();
    scrapeAll(router, 0);
    double coldStart = router.ttftModel().coldStartPrefillRate();
    RoutingDecision d = router.route(chat("s", words(5, 4000)));
    clock.addAndGet(Duration.ofMillis(4020).toNanos());
    d.reportFirstToken();
    EndpointState taught = d.endpointState();
    double learned = taught.prefillTokensPerSecond(coldStart);
    assertThat(learned).isLessThan(coldStart);
    for (EndpointState e : router.fleet().endpoints()) {
      boolean samePool = Objects.equals(e.endpoint().label(Endpoint.HARDWARE_LABEL),
          taught.endpoint().label(Endpoint.HARDWARE_LABEL));
      assertThat(e.prefillTokensPerSecond(coldStart)).as(e.id()).isEqualTo(samePool ? learned : coldStart);
    }
  }

  /**
   * The server's usage report corrects what the router counted: an approximate tokenizer's prompt length, and the
   * cached prefix it expected. Requests the server says were twice as long as counted make the queue it reports
   * weigh more in the TTFT prediction, which prices it at the tokens a request brings.
   */
  @Test
  void theServersUsageReportCorrectsThePrefillAQueuedRequestIsAssumedToBring() {
    long[] pending = new long[2];
    for (int withUsage = 0; withUsage < 2; withUsage++) {
      Router router = builder(1).build();
      scrapeAll(router, 0);
      for (int i = 0; i < 20; i++) {
        RoutingDecision d = router.route(chat("s" + i, words(i, 400)));
        d.reportFirstToken();
        d.reportFinished(withUsage == 1 ? new Usage(2 * d.promptTokens(), 0, 10) : Usage.UNKNOWN);
      }
      scrapeAll(router, 4);
      pending[withUsage] = state(router, "e0").estimatedPendingPrefillTokens();
    }
    assertThat(pending[0]).isPositive();
    assertThat(pending[1]).isGreaterThan(pending[0] + pending[0] / 2);
  }

  @Test
  void theUsageReportsPrefilledTokensFallBackToTheRoutersExpectationWhereItIsSilent() {
    Router router = builder(1).build();
    scrapeAll(router, 0);
    RoutingDecision d = router.route(chat("s", words(5, 400)));
    int prompt = d.promptTokens();
    assertThat(d.prefilledTokens(Usage.UNKNOWN)).isEqualTo(d.uncachedTokens());
    assertThat(d.prefilledTokens(new Usage(prompt + 10, 0, 1))).isEqualTo(prompt + 10 - d.cachedPrefixTokens());
    assertThat(d.prefilledTokens(new Usage(prompt, prompt - 16, 1))).isEqualTo(16);
    assertThat(d.prefilledTokens(new Usage(10, 50, 1))).isZero();
  }

  @Test
  void aRequestThatFailsAfterItsFirstTokenKeepsWhatItsFirstTokenTaughtAndEndsOnce() {
    Router router = builder(1).build();
    scrapeAll(router, 0);
    RoutingDecision d = router.route(chat("s", words(5, 4000)));
    clock.addAndGet(Duration.ofMillis(4020).toNanos());
    d.reportFirstToken();
    d.reportFailed();
    d.reportFinished(new Usage(1, 0, 1)); // a second end counts for nothing
    assertThat(d.endpointState().prefillRateSamples()).isEqualTo(1);
    assertThat(d.endpointState().inFlight()).isZero();
    assertThat(d.endpointState().completedCount()).isZero();
  }

  /**
   * Regression: past a fleet's KV capacity, TTFTs are mostly waiting for memory to free; learning a prefill rate from
   * them dragged servers to a few percent of their speed, each to a different one, and the router then avoided
   * whichever had learned worst (llm-d's benchmark at 15 QPS lost a quarter of its goodput).
   */
  @Test
  void aRequestThatFoundOthersWaitingTeachesNoPrefillRate() {
    Router router = builder(1).build();
    scrapeAll(router, 3);
    RoutingDecision d = router.route(chat("s", words(5, 4000)));
    clock.addAndGet(Duration.ofSeconds(40).toNanos());
    d.reportFirstToken();
    assertThat(d.endpointState().prefillRateSamples()).isZero();
  }

  /**
   * Regression: past the benchmark's load (shared prefixes at concurrency 96), the even weights sent prompts to the
   * server with the shorter queue over the one holding their prefix; each miss lengthened every queue, and the
   * fleet kept less than half the goodput it has with cache hits weighed more there.
   */
  @Test
  void onceEveryEndpointIsSaturatedAPromptGoesWhereItsPrefixIsCachedOverAShorterQueue() throws Exception {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    InferenceRequest request = chat("Long shared context." + words(3, 2000), "q");
    holds(router, "e0", request);
    state(router, "e0").onDispatched(50_000);
    state(router, "e0").updateMetrics(EndpointMetrics.of(12, 40, 0.5, clock.get()));

    state(router, "e1").updateMetrics(EndpointMetrics.of(2, 40, 0.5, clock.get()));
    RoutingDecision e1HasRoom = router.preview(request);
    assertThat(e1HasRoom.endpoint().id()).isEqualTo("e1");
    assertThat(e1HasRoom.breakdown().get(0).scores()).containsEntry("prefix-under-saturation", 0.0);

    state(router, "e1").updateMetrics(EndpointMetrics.of(6, 40, 0.5, clock.get()));
    RoutingDecision bothSaturated = router.preview(request);
    assertThat(bothSaturated.endpoint().id()).isEqualTo("e0");
    assertThat(bothSaturated.breakdown().get(0).scores()).containsEntry("prefix-under-saturation", 1.0);
  }

  /**
   * Regression: on eight servers at twice a long-conversation trace's rate, spreading the excess evenly put every
   * server behind and almost no request met a 2 s TTFT objective; a request predicted late on every endpoint now goes
   * to the one furthest behind, and the others keep meeting it (six traces: 30.7-86.2 -> 81.1-90.8 requests/min
   * within the objective, docs/BENCHMARKS.md).
   */
  @Test
  void aRequestPredictedLateEverywhereGoesToTheEndpointFurthestBehind() {
    Router router = builder(3).build();
    InferenceRequest request = chat("A new conversation." + words(9, 1000), "first message");
    for (String id : List.of("e0", "e1", "e2")) {
      state(router, id).updateMetrics(EndpointMetrics.of(8, 20, 0.9, clock.get()));
    }
    state(router, "e0").onDispatched(400_000);
    state(router, "e1").onDispatched(200_000);
    state(router, "e2").onDispatched(1_000);

    RoutingDecision oneKeepsUp = router.preview(request);
    assertThat(oneKeepsUp.endpoint().id()).as("e2 can still answer in time").isEqualTo("e2");
    assertThat(scoresOf(oneKeepsUp, "ttft-overflow")).containsOnly(entry("e0", 0.0), entry("e1", 0.0),
        entry("e2", 0.0));

    state(router, "e2").onDispatched(150_000);
    RoutingDecision allBehind = router.preview(request);
    assertThat(allBehind.endpoint().id()).as("late everywhere: the endpoint already furthest behind").isEqualTo("e0");
    assertThat(scoresOf(allBehind, "ttft-overflow")).containsOnly(entry("e0", 1.0), entry("e1", 0.0),
        entry("e2", 0.0));
  }

  /**
   * Regression: with 18,000-token system prompts at 32 clients, a prompt late everywhere went to the server furthest
   * behind, which was often one without its prefix only because the prompt had to be prefilled again there: the
   * groups each server kept broke up and the workload lost 9% of its peak goodput and its SLO at 32 clients. The
   * furthest behind is now chosen among the holders of the longest cached prefix.
   */
  @Test
  void aRequestLateEverywhereStaysWithTheHoldersOfItsPrefix() throws Exception {
    Router router = builder(3).cacheIndex(new PreciseCacheIndex()).build();
    InferenceRequest request = chat("Long shared context." + words(11, 2000), "next question");
    holds(router, "e1", request);
    for (String id : List.of("e0", "e1", "e2")) {
      state(router, id).updateMetrics(EndpointMetrics.of(8, 20, 0.9, clock.get()));
    }
    state(router, "e0").onDispatched(400_000);
    state(router, "e1").onDispatched(300_000);
    state(router, "e2").onDispatched(200_000);

    RoutingDecision decision = router.preview(request);
    assertThat(decision.predictedTtft()).as("late on the holder too").isGreaterThan(Duration.ofSeconds(4));
    assertThat(decision.endpoint().id()).as("the only holder, not e0 further behind without the prefix")
        .isEqualTo("e1");
    assertThat(scoresOf(decision, "ttft-overflow")).containsOnly(entry("e0", 0.0), entry("e1", 1.0),
        entry("e2", 0.0));
  }

  /**
   * Regression: on eight servers at twice a long-conversation trace's rate, one server momentarily below the
   * saturation thresholds drew conversations off their saturated servers, with their whole history to prefill again
   * there, until it was saturated too; counted from the point most servers are saturated, cache hits hold the
   * conversations and the fleet kept 2-18% more of its goodput (docs/ROUTING.md).
   */
  @Test
  void onceMostEndpointsAreSaturatedAPromptStaysWhereItsPrefixIsCached() throws Exception {
    Router router = builder(4).cacheIndex(new PreciseCacheIndex()).build();
    InferenceRequest request = chat("Long conversation so far." + words(5, 2000), "next message");
    holds(router, "e0", request);
    state(router, "e0").onDispatched(50_000);
    state(router, "e0").updateMetrics(EndpointMetrics.of(12, 40, 0.5, clock.get()));
    state(router, "e1").updateMetrics(EndpointMetrics.of(12, 40, 0.5, clock.get()));
    state(router, "e2").updateMetrics(EndpointMetrics.of(1, 40, 0.5, clock.get()));
    state(router, "e3").updateMetrics(EndpointMetrics.of(1, 40, 0.5, clock.get()));

    RoutingDecision halfSaturated = router.preview(request);
    assertThat(halfSaturated.endpoint().id()).as("half the fleet has room: load decides").isIn("e2", "e3");
    assertThat(scoresOf(halfSaturated, "prefix-under-saturation")).containsEntry("e0", 0.0);

    state(router, "e2").updateMetrics(EndpointMetrics.of(12, 40, 0.5, clock.get()));
    RoutingDecision mostSaturated = router.preview(request);
    assertThat(mostSaturated.endpoint().id()).isEqualTo("e0");
    assertThat(scoresOf(mostSaturated, "prefix-under-saturation").get("e0")).isCloseTo(0.5, within(0.01));
  }

  /**
   * Regression: with 18,000-token system prompts at 64 clients, prompts that no server held any more were placed by
   * load, each group of them spread over every server, and the fleet ran out of KV memory: goodput fell to a tenth
   * of its peak where SGLang's router, which sends a prefix back where it sent it before, held (docs/BENCHMARKS.md).
   */
  @Test
  void onceEveryEndpointIsSaturatedALongPromptCachedNowhereGoesBackWhereItWasLastSent() {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    String context = "Long shared context." + words(3, 2000);
    // a cache of 1,000 blocks: the prompt's ~170 blocks are far above a fiftieth of it
    for (String id : List.of("e0", "e1")) {
      state(router, id).updateMetrics(EndpointMetrics.of(6, 40, 0.9, clock.get()).withCacheConfig(16, 1000));
    }
    RoutingDecision first = router.route(chat(context, "first question"));
    String home = first.endpoint().id();
    String other = home.equals("e0") ? "e1" : "e0";
    first.reportFinished(Usage.UNKNOWN);
    // the home server now looks busier, and its cache has lost the prompt (the precise index knows of no block)
    state(router, home).updateMetrics(EndpointMetrics.of(9, 40, 0.9, clock.get()).withCacheConfig(16, 1000));

    RoutingDecision saturated = router.preview(chat(context, "second question"));
    assertThat(saturated.endpoint().id()).isEqualTo(home);
    Map<String, Double> scores = scoresOf(saturated, "prefix-home");
    assertThat(scores.get(home)).isGreaterThan(0.9);
    assertThat(scores.get(other)).isZero();

    state(router, other).updateMetrics(EndpointMetrics.of(0, 10, 0.3, clock.get()).withCacheConfig(16, 1000));
    RoutingDecision roomElsewhere = router.preview(chat(context, "second question"));
    assertThat(roomElsewhere.endpoint().id()).as("below saturation, load decides").isEqualTo(other);
    assertThat(scoresOf(roomElsewhere, "prefix-home")).containsEntry("e0", 0.0).containsEntry("e1", 0.0);
  }

  /**
   * Regression: with 18,000-token system prompts the precise index learned of a prompt's blocks only from its server's
   * events, so requests of its group that arrived while it was still queued looked cold and were spread by load; every
   * group came to live on every server, and past saturation the fleet ran out of KV memory (docs/BENCHMARKS.md,
   * "Prompts still in their prefill").
   */
  @Test
  void aPromptSharingTheLongPrefixOfOneStillAwaitingItsFirstTokenGoesWhereThatOneWent() {
    Router router = idlePrecise(3);
    String context = LONG_CONTEXT;
    RoutingDecision first = router.route(chat(context, "first question"));
    String home = first.endpoint().id();

    RoutingDecision second = router.route(chat(context, "second question"));
    assertThat(second.endpoint().id()).isEqualTo(home);
    assertThat(second.cachedPrefixTokens()).isGreaterThan(second.promptTokens() * 9 / 10);
    assertThat(state(router, home).promptsAwaitingFirstToken().size()).isEqualTo(2);

    first.reportFirstToken();
    second.reportFailed();
    assertThat(state(router, home).promptsAwaitingFirstToken().size()).as("released by the first report").isZero();
    assertThat(router.preview(chat(context, "third question")).cachedPrefixTokens())
        .as("from then on only the server's events say what it holds").isZero();
  }

  /** Over 4,096 tokens: long enough for its prefix to be credited while it awaits its first token. */
  private static final String LONG_CONTEXT = "Long shared context." + words(4, 5000);

  /** {@code n} endpoints, a precise index, every endpoint scraped idle. */
  private Router idlePrecise(int n) {
    Router router = builder(n).cacheIndex(new PreciseCacheIndex()).build();
    scrapeAll(router, 0);
    return router;
  }

  @Test
  void aRetriedPromptIsHeldOnTheAlternateItMovesTo() {
    Router router = idlePrecise(3);
    String context = LONG_CONTEXT;
    RoutingDecision first = router.route(chat(context, "first question"));
    RoutingDecision moved = Objects.requireNonNull(first.retryOnNextAlternate());

    assertThat(state(router, first.endpoint().id()).promptsAwaitingFirstToken().size()).isZero();
    assertThat(state(router, moved.endpoint().id()).promptsAwaitingFirstToken().size()).isEqualTo(1);
    assertThat(router.preview(chat(context, "second question")).endpoint().id()).isEqualTo(moved.endpoint().id());
    moved.reportFinished(Usage.UNKNOWN);
    assertThat(state(router, moved.endpoint().id()).promptsAwaitingFirstToken().size()).isZero();
  }

  @Test
  void aPromptTooShortToBeCreditedIsNotHeld() {
    Router router = idlePrecise(2);
    RoutingDecision d = router.route(chat("Short system prompt.", "q"));
    assertThat(state(router, d.endpoint().id()).promptsAwaitingFirstToken().size()).isZero();
  }

  /**
   * Regression: with a hybrid model's groups registered, the groups' rule cut a queued prompt's credit to nothing
   * (it has no events in the other groups yet), so the credit never applied where the gateway wraps its index.
   */
  @Test
  void aHybridModelsQueuedPromptIsCreditedToo() {
    HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());
    Router router = builder(3).cacheIndex(index).build();
    for (EndpointState e : router.fleet().endpoints()) {
      HybridGroups groups = new HybridGroups(MODEL);
      groups.declare(1, HybridGroups.Role.SLIDING_WINDOW, 4096, 16);
      index.register(e, groups);
    }
    scrapeAll(router, 0);
    RoutingDecision first = router.route(chat(LONG_CONTEXT, "first question"));
    RoutingDecision second = router.route(chat(LONG_CONTEXT, "second question"));
    assertThat(second.endpoint().id()).isEqualTo(first.endpoint().id());
    assertThat(second.cachedPrefixTokens()).isGreaterThan(second.promptTokens() * 9 / 10);
  }

  @Test
  void anApproximateIndexRemembersItsDecisionsItselfSoNoPromptIsHeldAwaitingItsFirstToken() {
    Router router = builder(2).build();
    scrapeAll(router, 0);
    RoutingDecision d = router.route(chat("Long shared context." + words(5, 2000), "q"));
    assertThat(state(router, d.endpoint().id()).promptsAwaitingFirstToken().size()).isZero();
  }

  @Test
  void theLongPromptScoreStandsBackWhenAnyEndpointHoldsThePrompt() throws Exception {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    InferenceRequest request = chat("Long shared context." + words(3, 2000), "q");
    for (String id : List.of("e0", "e1")) {
      state(router, id).updateMetrics(EndpointMetrics.of(6, 40, 0.9, clock.get()).withCacheConfig(16, 1000));
    }
    String home = router.route(request).endpoint().id();
    holds(router, home.equals("e0") ? "e1" : "e0", request);
    assertThat(scoresOf(router.preview(request), "prefix-home")).containsEntry("e0", 0.0).containsEntry("e1", 0.0);
  }

  @Test
  void theDefaultProfileHasTheLongPromptScoreWithAPreciseIndexOnly() {
    assertThat(builder(2).cacheIndex(new PreciseCacheIndex()).build().scorerNames()).contains("prefix-home");
    assertThat(builder(2).build().scorerNames()).as("approximate index").doesNotContain("prefix-home")
        .contains("prefix-under-saturation");
  }

  @Test
  void aShortPromptIsNeverSentHomeByTheLongPromptScore() {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    // a cache of a million blocks: the prompt is far below a fiftieth of it
    for (String id : List.of("e0", "e1")) {
      state(router, id).updateMetrics(EndpointMetrics.of(6, 40, 0.9, clock.get()).withCacheConfig(16, 1_000_000));
    }
    InferenceRequest request = chat("Long shared context." + words(3, 2000), "q");
    router.route(request).reportFinished(Usage.UNKNOWN);
    assertThat(scoresOf(router.preview(request), "prefix-home")).containsEntry("e0", 0.0).containsEntry("e1", 0.0);
  }

  /**
   * Regression: with 64 agent sessions of ~55K-token contexts on 4 servers that hold ~38, sessions moved off their
   * saturated server recomputed their contexts elsewhere and evicted the sessions resident there: the fleet thrashed
   * and goodput fell to 5.8 requests/min (docs/ROUTING.md, session residency).
   */
  @Test
  void whenLiveSessionsOutgrowTheKvMemoryASessionWaitsOnItsEndpointAndANewOneGoesWhereTheLeastIsCommitted() {
    Router router = builder(2).build();
    // 2 x 160 tokens of KV memory: each session of ~300 words alone commits more than an endpoint holds
    for (String id : List.of("e0", "e1")) {
      state(router, id).updateMetrics(EndpointMetrics.of(0, 10, 0.95, clock.get()).withCacheConfig(16, 10));
    }
    Map<String, String> holders = new java.util.HashMap<>();
    for (int i = 0; i < 10; i++) {
      RoutingDecision d = router.route(InferenceRequest.builder(MODEL).system(words(i, 300)).user("turn 0")
          .sessionId("s" + i).build());
      holders.put("s" + i, d.endpoint().id());
      d.reportFinished(Usage.UNKNOWN);
    }
    String home = holders.get("s0");
    String other = home.equals("e0") ? "e1" : "e0";
    state(router, home).updateMetrics(EndpointMetrics.of(40, 200, 0.99, clock.get()).withCacheConfig(16, 10));
    state(router, other).updateMetrics(EndpointMetrics.of(0, 1, 0.2, clock.get()).withCacheConfig(16, 10));

    RoutingDecision next = router.preview(InferenceRequest.builder(MODEL).system(words(0, 300)).user("turn 1")
        .sessionId("s0").build());
    assertThat(next.endpoint().id()).as("waits where its context is").isEqualTo(home);
    assertThat(scoresOf(next, "session-residency")).containsEntry(home, 1.0).containsEntry(other, 0.0);

    Map<String, Double> fresh = scoresOf(router.preview(InferenceRequest.builder(MODEL).system(words(99, 300))
        .user("turn 0").sessionId("new").build()), "session-residency");
    long onHome = holders.values().stream().filter(home::equals).count();
    String lighter = onHome * 2 < holders.size() ? home : other;
    assertThat(fresh).as("a new session: where the sessions commit the least").containsEntry(lighter, 1.0);

    // with room for every session, the scorer stands back and load decides, as before
    for (String id : List.of("e0", "e1")) {
      state(router, id).updateMetrics(EndpointMetrics.of(id.equals(home) ? 40 : 0, id.equals(home) ? 200 : 1,
          id.equals(home) ? 0.99 : 0.2, clock.get()).withCacheConfig(16, 1_000_000));
    }
    RoutingDecision roomy = router.preview(InferenceRequest.builder(MODEL).system(words(0, 300)).user("turn 1")
        .sessionId("s0").build());
    assertThat(scoresOf(roomy, "session-residency")).containsEntry("e0", 0.0).containsEntry("e1", 0.0);
    assertThat(roomy.endpoint().id()).isEqualTo(other);
  }

  @Test
  void aSessionStaysOnItsEndpointWhileThatEndpointIsNotSaturated() {
    Router router = builder(3).build();
    scrapeAll(router, 0);
    RoutingDecision first = router.route(InferenceRequest.builder(MODEL).user("hello").sessionId("conv-1").build());
    first.reportFinished(Usage.UNKNOWN);
    String home = first.endpoint().id();
    for (int i = 0; i < 10; i++) {
      RoutingDecision d = router.route(InferenceRequest.builder(MODEL).user("unrelated " + i)
          .sessionId("conv-1").build());
      assertThat(d.endpoint().id()).isEqualTo(home);
      d.reportFinished(Usage.UNKNOWN);
    }
    state(router, home).updateMetrics(EndpointMetrics.of(40, 200, 0.97, clock.get()));
    RoutingDecision overloaded = router.route(InferenceRequest.builder(MODEL).user("again").sessionId("conv-1")
        .build());
    assertThat(overloaded.endpoint().id()).isNotEqualTo(home);
  }

  @Test
  void aNewConversationStartsOnTheEndpointWithTheMostKvHeadroom() {
    // Regression: placed by its first turn's predicted TTFT alone, conversations piled their growing histories onto
    // one server's cache while another's sat half empty, and the tenant mix fell behind llm-d (docs/BENCHMARKS.md).
    Router router = builder(2).build();
    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.45, clock.get()));
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 20, 0.05, clock.get()));
    String question = words(5, 4000);

    RoutingDecision anonymous = router.preview(chat("s", question));
    assertThat(anonymous.endpoint().id()).isEqualTo("e0");
    assertThat(scoresOf(anonymous, "session-affinity")).containsEntry("e0", 0.0).containsEntry("e1", 0.0);

    RoutingDecision opening = router.route(InferenceRequest.builder(MODEL).system("s").user(question)
        .sessionId("conv-1").build());
    assertThat(opening.endpoint().id()).isEqualTo("e1");
    Map<String, Double> headroom = scoresOf(opening, "session-affinity");
    assertThat(headroom.get("e0")).isCloseTo(0.55, within(1e-9));
    assertThat(headroom.get("e1")).isCloseTo(0.95, within(1e-9));
    opening.reportFinished(Usage.UNKNOWN);

    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 20, 0.6, clock.get()));
    InferenceRequest secondTurn = InferenceRequest.builder(MODEL).system("s").user("and then?").sessionId("conv-1")
        .build();
    assertThat(scoresOf(router.preview(secondTurn), "session-affinity"))
        .containsEntry("e0", 0.0).containsEntry("e1", 1.0);
    // a session is its tenant's: another tenant sending the same id opens a session of its own
    InferenceRequest otherTenant = secondTurn.toBuilder().tenant("someone-else").build();
    assertThat(scoresOf(router.preview(otherTenant), "session-affinity").get("e1")).isCloseTo(0.4, within(1e-9));

    state(router, "e1").updateHealth(Health.UNHEALTHY, "connection refused");
    assertThat(scoresOf(router.preview(secondTurn), "session-affinity").get("e0")).isCloseTo(0.55, within(1e-9));
  }

  @Test
  void aNewConversationCountsAnEndpointWithoutMetricsAsHavingRoom() {
    Router router = builder(2).build();
    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.3, clock.get()));
    RoutingDecision d = router.preview(InferenceRequest.builder(MODEL).user("hi").sessionId("conv-2").build());
    assertThat(scoresOf(d, "session-affinity").get("e0")).isCloseTo(0.7, within(1e-9));
    assertThat(scoresOf(d, "session-affinity")).containsEntry("e1", 1.0);
  }

  @Test
  void aPolicyCanRejectRewriteRestrictAndAddFallbacks() {
    List<Endpoint> fleet = new ArrayList<>(endpoints(2));
    fleet.add(Endpoint.of("small-0", "http://127.0.0.1:9100", "qwen3-0.6b").withLabel("pool", "small"));
    fleet.add(new Endpoint("cloud", java.net.URI.create("https://api.example.com"), "big-cloud-model",
        Map.of(Endpoint.EXTERNAL_LABEL, "true")));
    Router router = Router.builder().endpoints(fleet).ticker(clock::get).random(new SplittableRandom(1))
        .policyEngine(new dev.kinference.policy.PolicyEngine() {
          @Override
          public String name() {
            return "test-policy";
          }

          @Override
          public PolicyVerdict evaluate(InferenceRequest request, dev.kinference.endpoint.Fleet.Snapshot snapshot) {
            return switch (request.model()) {
              case "forbidden" -> new PolicyVerdict.Reject(403, "tenant may not use this model", null,
                  List.of("p/deny: reject 403"));
              case "cheap" -> new PolicyVerdict.Proceed(request.withModel("qwen3-0.6b"),
                  e -> "small".equals(e.endpoint().label("pool")), List.of("cloud"), false,
                  List.of("p/simple: route pool small"));
              case "burst" -> new PolicyVerdict.Proceed(request.withModel(MODEL), null, List.of("cloud"), true,
                  List.of("p/overflow: prefer cloud"));
              default -> PolicyVerdict.Proceed.unchanged(request);
            };
          }
        }).build();

    assertThatThrownBy(() -> router.route(InferenceRequest.builder("forbidden").user("x").build()))
        .isInstanceOfSatisfying(RequestRejectedException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(403);
          assertThat(e.trace()).containsExactly("p/deny: reject 403");
        });

    RoutingDecision cheap = router.route(InferenceRequest.builder("cheap").user("x").build());
    assertThat(cheap.endpoint().id()).isEqualTo("small-0");
    assertThat(cheap.request().model()).isEqualTo("qwen3-0.6b");
    assertThat(cheap.alternates()).extracting(Endpoint::id).containsExactly("cloud");
    assertThat(cheap.policyTrace()).containsExactly("p/simple: route pool small");

    RoutingDecision burst = router.route(InferenceRequest.builder("burst").user("x").build());
    burst.reportFinished(Usage.UNKNOWN);
    assertThat(burst.endpoint().id()).isEqualTo("cloud");
    assertThat(burst.alternates()).extracting(Endpoint::id).containsExactlyInAnyOrder("e0", "e1");

    RoutingDecision plain = router.route(InferenceRequest.builder(MODEL).user("x").build());
    assertThat(plain.endpoint().id()).as("external endpoints are only used when a policy names them")
        .isIn("e0", "e1");
  }

  @Test
  void endpointsWithDifferentBlockSizesAreLookedUpWithTheirOwnKeys() throws Exception {
    Router router = builder(2).cacheIndex(new PreciseCacheIndex()).build();
    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()).withCacheConfig(16, 10_000));
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()).withCacheConfig(32, 10_000));
    InferenceRequest request = chat("Context" + words(6, 800), "q");
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    int blocks = prompt.tokenCount() / 32;
    long[] hashes = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      hashes[i] = 1000L + i;
    }
    router.onKvEvent("e1", new KvEvent.BlockStored(hashes, null,
        java.util.Arrays.copyOf(prompt.tokens(), blocks * 32), 32, null, KvEvent.Medium.GPU, null));
    RoutingDecision d = router.route(request);
    assertThat(d.endpoint().id()).isEqualTo("e1");
    assertThat(d.cachedPrefixTokens()).isEqualTo(blocks * 32);
  }

  @Test
  void kvHeadroomTellsEndpointsApartOnlyAboveItsKnee() {
    Router router = builder(3).scorer(new KvUtilizationScorer(0.5), 1).build();
    state(router, "e0").updateMetrics(EndpointMetrics.of(0, 0, 0.2, clock.get()));
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 0, 0.5, clock.get()));
    state(router, "e2").updateMetrics(EndpointMetrics.of(0, 0, 0.9, clock.get()));
    Map<String, Double> scores = scoresOf(router.route(chat("s", "q")), "kv-utilization");
    assertThat(scores).containsEntry("e0", 1.0).containsEntry("e1", 1.0);
    assertThat(scores.get("e2")).isCloseTo(0.2, within(1e-9));
    assertThatThrownBy(() -> new KvUtilizationScorer(1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("knee");
  }

  @Test
  void theDefaultQueueTermTrustsAReportedQueueOverARequestSentSinceTheScrape() {
    // Regression: counting every request sent since the scrape as queued made a server that had just been sent one
    // score as low as a server that reported one waiting, which bunched closed-loop arrivals (docs/BENCHMARKS.md).
    assertThat(queueScoresWithOneReportedAndOneSentSince(builder(3).build()))
        .containsExactly(0.0, 0.75, 1.0);
    assertThat(queueScoresWithOneReportedAndOneSentSince(builder(3).scorer(new QueueDepthScorer(0.25), 1).build()))
        .containsExactly(0.0, 0.75, 1.0);
    assertThat(queueScoresWithOneReportedAndOneSentSince(builder(3).scorer(new QueueDepthScorer(1), 1).build()))
        .containsExactly(0.0, 0.0, 1.0);
    // selected by name, or made with no arguments, it is the default profile's
    assertThat(queueScoresWithOneReportedAndOneSentSince(builder(3).scorer("queue-depth", 1).build()))
        .containsExactly(0.0, 0.75, 1.0);
    assertThat(queueScoresWithOneReportedAndOneSentSince(builder(3).scorer(new QueueDepthScorer(), 1).build()))
        .containsExactly(0.0, 0.75, 1.0);
    assertThatThrownBy(() -> new QueueDepthScorer(1.5)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sinceScrapeWeight");
    assertThatThrownBy(() -> new QueueDepthScorer(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
  }

  /** Each ranked endpoint's score from the scorer named {@code scorer}. */
  private static Map<String, Double> scoresOf(RoutingDecision decision, String scorer) {
    Map<String, Double> scores = new HashMap<>();
    for (CandidateScore c : decision.breakdown()) {
      scores.put(c.endpoint().id(), c.scores().get(scorer));
    }
    return scores;
  }

  /** The queue-depth scores of e0 (one reported waiting), e1 (none reported, one sent since) and e2 (neither). */
  private double[] queueScoresWithOneReportedAndOneSentSince(Router router) {
    state(router, "e0").updateMetrics(EndpointMetrics.of(1, 0, 0.1, clock.get()));
    state(router, "e1").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()));
    state(router, "e2").updateMetrics(EndpointMetrics.of(0, 0, 0.1, clock.get()));
    state(router, "e1").onDispatched(100);
    Map<String, Double> scores = scoresOf(router.route(chat("s", "q")), "queue-depth");
    return new double[] {scores.get("e0"), scores.get("e1"), scores.get("e2")};
  }

  @Test
  void namedScorersAreFoundThroughServiceLoader() {
    Router router = builder(2).scorer("prefix-overlap", 3).scorer("queue-depth", 2).scorer("kv-utilization", 2)
        .build();
    assertThat(router.scorerNames()).containsExactly("prefix-overlap", "queue-depth", "kv-utilization");
    assertThat(router.route(chat("s", "q")).breakdown().get(0).scores())
        .containsOnlyKeys("prefix-overlap", "queue-depth", "kv-utilization");
    assertThatThrownBy(() -> builder(1).scorer("no-such-scorer", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("known: [")
        .hasMessageContaining("predicted-ttft");
  }

  @Test
  void everyPluginKindCanBeSelectedByName() {
    Router router = builder(2).cacheIndex("precise").tokenizer("approximate").filters("healthy").picker("softmax")
        .build();
    assertThat(router.cacheIndex()).isInstanceOf(PreciseCacheIndex.class);
    assertThat(router.filterNames()).containsExactly("healthy");
    assertThat(router.pickerName()).isEqualTo("softmax");
    assertThat(router.route(chat("s", "q")).endpoint().id()).isIn("e0", "e1");
  }

  @Test
  void theBuilderValidatesEachSetting() {
    assertThatThrownBy(() -> Router.builder().scorer(new PredictedTtftScorer(), 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Router.builder().scorer(new PredictedTtftScorer(), 1)
        .scorer(new PredictedTtftScorer(), 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Router.builder().defaultBlockSize(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Router.builder().maxAlternates(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aFailingTokenizerFallsBackLoudlyInsteadOfFailingTheRequest() {
    Router router = builder(2).tokenizer(new dev.kinference.prompt.Tokenizer() {
      @Override
      public String name() {
        return "broken";
      }

      @Override
      public int[] tokenize(InferenceRequest request) throws dev.kinference.prompt.TokenizationException {
        throw new dev.kinference.prompt.TokenizationException("template cannot be rendered");
      }
    }).build();
    RoutingDecision d = router.route(chat("s", "q"));
    assertThat(d.notes()).anySatisfy(n -> assertThat(n).contains("tokenizer broken failed"));
    assertThat(d.promptTokens()).isEqualTo(new ApproximateTokenizer().tokenize(chat("s", "q")).length);
  }

  @Test
  void aRestrictionChoosesOnlyWithinItAndNeverFailsOpen() {
    Router router = builder(4).maxAlternates(3).build();
    scrapeAll(router, 0);
    for (int i = 0; i < 20; i++) {
      RoutingDecision d = router.route(chat("s", "q" + i), e -> e.id().equals("e1") || e.id().equals("e3"));
      assertThat(d.endpoint().id()).isIn("e1", "e3");
      assertThat(d.alternates()).allSatisfy(a -> assertThat(a.id()).isIn("e1", "e3"));
      d.reportFinished(Usage.UNKNOWN);
    }
    assertThatThrownBy(() -> router.route(chat("s", "q"), e -> false))
        .isInstanceOfSatisfying(NoEndpointException.class, e -> assertThat(e.httpStatus()).isEqualTo(503));
    assertThat(router.route(chat("s", "q")).endpoint().id()).as("unrestricted as before").startsWith("e");
  }
}
