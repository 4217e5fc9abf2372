package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.sim.engine.FinishReason;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.engine.RequestListener;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.engine.SimRequest;
import dev.kinference.sim.fleet.EngineSpec;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.MooncakeTrace;
import dev.kinference.sim.workload.SharedPrefixWorkload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ComparisonRoutersTest {

  @Test
  void theRadixTreeMatchesTheLongestPrefixAndTracksEachTenantsSize() {
    CharRadixTree tree = new CharRadixTree(3);
    tree.insert("hello world", 0, 1);
    tree.insert("hello there", 1, 2);
    assertThat(tree.match("hello world!")).isEqualTo(new CharRadixTree.Match(11, 0));
    assertThat(tree.match("hello th")).isEqualTo(new CharRadixTree.Match(8, 1));
    assertThat(tree.match("goodbye").matchedChars()).isZero();
    assertThat(tree.size(0)).isEqualTo(11);
    assertThat(tree.size(1)).isEqualTo(11);
    assertThat(tree.smallestTenant()).isEqualTo(2);
    tree.evict(0, 6);
    assertThat(tree.size(0)).isEqualTo(6);
    // "world" had no other tenant and is gone; tenant 1 still holds "hello "
    assertThat(tree.match("hello world")).isEqualTo(new CharRadixTree.Match(6, 1));
  }

  @Test
  void sglangFollowsMatchesAboveThirtyPercentAndOtherwiseTheSmallestTree() {
    SglangCacheAwareRouter r = new SglangCacheAwareRouter();
    r.start(new FakeView(3));
    FleetRouter.Decision a = r.route(FakeView.request("a", "system prompt for everyone, question one"), 0);
    FleetRouter.Decision b = r.route(FakeView.request("b", "something else entirely"), 0);
    assertThat(b.server()).isNotEqualTo(a.server());
    FleetRouter.Decision c = r.route(FakeView.request("c", "system prompt for everyone, question two"), 0);
    assertThat(c.server()).isEqualTo(a.server());
  }

  @Test
  void llmdApproximateRemembersWhereItSentAPrompt() {
    LlmdRouter r = new LlmdRouter(false, 1);
    r.start(new FakeView(4));
    String text = "x".repeat(64 * 10);
    int first = r.route(FakeView.request("a", text), 0).server();
    for (int i = 0; i < 5; i++) {
      assertThat(r.route(FakeView.request("b" + i, text + i), 0).server()).isEqualTo(first);
    }
  }

  @Test
  void dynamoSendsToTheCheapestWorker() {
    DynamoKvRouter r = new DynamoKvRouter(1);
    r.start(new FakeView(2));
    FleetRouter.Decision a = r.route(FakeView.request("a", "p"), 0);
    FleetRouter.Decision b = r.route(FakeView.request("b", "q"), 0);
    assertThat(b.server()).isNotEqualTo(a.server());
  }

  @Test
  void randomSpreadsEvenlyAndRepeatsItselfForASeed() {
    int[] first = servers(Routers.create(Routers.RANDOM, 7), 3, 3000);
    assertThat(servers(Routers.create(Routers.RANDOM, 7), 3, 3000)).isEqualTo(first);
    int[] perServer = new int[3];
    for (int s : first) {
      perServer[s]++;
    }
    assertThat(Arrays.stream(perServer).boxed().toList()).allSatisfy(n -> assertThat(n).isBetween(900, 1100));
  }

  @Test
  void roundRobinCyclesThroughTheServers() {
    assertThat(servers(Routers.create("round-robin", 1), 3, 7)).containsExactly(0, 1, 2, 0, 1, 2, 0);
  }

  @Test
  void leastRequestSendsWhereFewestAreInFlightAndCountsFinishes() {
    FleetRouter r = Routers.create(Routers.LEAST_REQUEST, 3);
    r.start(new FakeView(3));
    List<FleetRouter.Decision> sent = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      sent.add(r.route(FakeView.request("r" + i, "p"), 0));
    }
    assertThat(sent.subList(0, 3).stream().map(FleetRouter.Decision::server).toList())
        .containsExactlyInAnyOrder(0, 1, 2);
    int busiest = sent.get(3).server();
    // the busiest server's two requests finish: it is now the idlest, where without counting finishes it stays
    // the busiest (2 against 1 and 1) and could not be chosen
    sent.stream().filter(d -> d.server() == busiest).forEach(d -> d.onFinished(finished("x"), 0));
    assertThat(r.route(FakeView.request("next", "p"), 0).server()).isEqualTo(busiest);
  }

  @Test
  void powerOfTwoPicksTheLessLoadedOfItsTwoDraws() {
    // with two servers both are drawn every time, so the less loaded one always wins
    FleetRouter r = Routers.create("power-of-two", 5);
    r.start(new FakeView(2));
    int first = r.route(FakeView.request("a", "p"), 0).server();
    assertThat(r.route(FakeView.request("b", "p"), 0).server()).isEqualTo(1 - first);
    FleetRouter.Decision c = r.route(FakeView.request("c", "p"), 0);
    assertThat(r.route(FakeView.request("d", "p"), 0).server()).isEqualTo(1 - c.server());
  }

  @Test
  void theOracleFollowsATrulyCachedPrefixToABusierServerWhileItsQueueCostsLessThanThePrefillItSaves() {
    FakeView view = new FakeView(3);
    String shared = "a long shared system prompt, ".repeat(140);
    ClientRequest earlier = FakeView.request("earlier", shared + "question one");
    view.engine(2).submit(SimRequest.of("earlier", earlier.promptTokens(), 1), RequestListener.NONE);
    view.engine(2).advanceTo(10_000_000_000L);
    // a short unrelated prompt queued on server 2: cheaper than prefilling the shared prompt elsewhere
    ClientRequest small = FakeView.request("small", "unrelated " + 0);
    view.engine(2).submit(SimRequest.of("small", small.promptTokens(), 1), RequestListener.NONE);
    assertThat(view.engine(2).pendingPrefillTokens()).isPositive();
    FleetRouter r = Routers.create(Routers.ORACLE, 1);
    r.start(view);
    assertThat(r.route(FakeView.request("q", shared + "question two"), 0).server()).isEqualTo(2);
    // a queue far longer than the shared prompt: prefilling it on an idle server is sooner
    for (int i = 0; i < 6; i++) {
      ClientRequest other = FakeView.request("other" + i, "unrelated ".repeat(600) + i);
      view.engine(2).submit(SimRequest.of("other" + i, other.promptTokens(), 1), RequestListener.NONE);
    }
    assertThat(view.engine(2).pendingPrefillTokens()).isGreaterThan(4L * earlier.promptTokens().length);
    assertThat(r.route(FakeView.request("q2", shared + "question three"), 0).server()).isNotEqualTo(2);
  }

  @Test
  void theOracleDoesNotHerdOntoTheServersHoldingAFirstBlockEveryRequestShares() {
    // Every request starts with the same trace block (a common system prompt), then its own: the greedy
    // longest-prefix oracle sent all of them to the few servers that cached that block first.
    List<MooncakeTrace.Entry> entries = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      entries.add(new MooncakeTrace.Entry(i * 3L, 3 * 512, 64, new long[] {0, 1000 + 2L * i, 1001 + 2L * i}));
    }
    java.io.StringWriter jsonl = new java.io.StringWriter();
    try {
      MooncakeTrace.write(entries, jsonl);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    EngineSpec engine = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1);
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(16, engine, 3));
    VirtualFleet.Window window = new VirtualFleet.Window(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(60));
    RunResult oracle = replay(fleet, window, jsonl.toString(), Routers.ORACLE);
    assertThat(Arrays.stream(oracle.requestsPerServer()).filter(n -> n > 0).count()).isGreaterThanOrEqualTo(12);
    // never the worst: below the load balancers' worst p90 TTFT (round robin's even spacing beats it here)
    double worst = 0;
    for (String other : List.of(Routers.RANDOM, "round-robin", Routers.LEAST_REQUEST, Routers.OURS)) {
      worst = Math.max(worst, replay(fleet, window, jsonl.toString(), other).ttftSeconds(90));
    }
    assertThat(oracle.ttftSeconds(90)).isLessThan(worst);
  }

  @Test
  void theOracleSpreadsABurstOfRequestsSentAtOneInstant() {
    // 16 fresh 4K-token prompts at each whole second, as the public conversation trace sends them: the engines
    // cannot show requests still on their way, so before it counted its own sends the oracle put a burst on the
    // server that looked idlest and was far worse than random
    List<MooncakeTrace.Entry> entries = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      long first = 1000 + 8L * i;
      entries.add(new MooncakeTrace.Entry(i / 16 * 2000L, 8 * 512, 64,
          new long[] {0, first, first + 1, first + 2, first + 3, first + 4, first + 5, first + 6}));
    }
    java.io.StringWriter jsonl = new java.io.StringWriter();
    try {
      MooncakeTrace.write(entries, jsonl);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    EngineSpec engine = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1);
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(16, engine, 3));
    VirtualFleet.Window window = new VirtualFleet.Window(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(60));
    RunResult oracle = replay(fleet, window, jsonl.toString(), Routers.ORACLE);
    RunResult random = replay(fleet, window, jsonl.toString(), Routers.RANDOM);
    assertThat(oracle.ttftSeconds(90)).isLessThan(random.ttftSeconds(90));
    assertThat(Arrays.stream(oracle.requestsPerServer()).max().orElseThrow()).isLessThanOrEqualTo(600 / 16 + 8);
  }

  private static RunResult replay(VirtualFleet fleet, VirtualFleet.Window window, String jsonl, String router) {
    MooncakeTrace trace = MooncakeTrace.read(new java.io.StringReader(jsonl), "Qwen3-8B", 0, "test");
    RunResult result = new RunResult(router, "trace", new LoadPattern.Replay(1),
        new Slo(Duration.ofSeconds(2), Duration.ZERO), trace.durationNanos() / 1e9);
    fleet.run(trace, new LoadPattern.Replay(1), window, Routers.create(router, 5), result);
    assertThat(result.requests()).isEqualTo(600);
    return result;
  }

  private static int[] servers(FleetRouter router, int servers, int requests) {
    router.start(new FakeView(servers));
    int[] chosen = new int[requests];
    for (int i = 0; i < requests; i++) {
      chosen[i] = router.route(FakeView.request("r" + i, "p"), 0).server();
    }
    return chosen;
  }

  private static RequestOutcome finished(String id) {
    return new RequestOutcome(id, FinishReason.LENGTH, 1, 1, 0, 0, 1, 2, 0);
  }

  @Test
  void cacheAwareRoutersHitTheCacheFarMoreThanRandomOnSharedPrefixes() {
    EngineSpec engine = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1).withNumGpuBlocks(1200);
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(3, engine, 11));
    // (Dynamo is left out: its cost counts every active block, so load outweighs a prefix this size)
    VirtualFleet.Window window = new VirtualFleet.Window(Duration.ofSeconds(5), Duration.ofSeconds(15),
        Duration.ofSeconds(30));
    double random = hitRate(fleet, window, "random");
    for (String name : new String[] {Routers.OURS, Routers.OURS_APPROX, "sglang-cache-aware", "llm-d-precise",
        "llm-d-approx", Routers.ORACLE}) {
      assertThat(hitRate(fleet, window, name)).as(name).isGreaterThan(random + 0.2);
    }
  }

  private static double hitRate(VirtualFleet fleet, VirtualFleet.Window window, String router) {
    RunResult result = new RunResult(router, "shared", new LoadPattern.ClosedLoop(6),
        new Slo(Duration.ofSeconds(1), Duration.ZERO), 15);
    fleet.run(new SharedPrefixWorkload("Qwen3-8B", 30, 2, 1500, 100, 20, null, 3), new LoadPattern.ClosedLoop(6),
        window, Routers.create(router, 5), result);
    assertThat(result.finished()).isPositive();
    return result.prefixHitRate();
  }
}
