package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.MultiTurnShape;
import dev.kinference.sim.workload.SharedPrefixShape;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchmarkTest {

  private static final BenchmarkPlan.FleetOverride SAME_FLEET = BenchmarkPlan.FleetOverride.NONE;

  private static Benchmark.Scenario tiny() {
    return Scenarios.smoke().withRouters(List.of(Routers.OURS, Routers.RANDOM, Routers.LEAST_REQUEST,
            Routers.ORACLE))
        .withLoads(List.of(new LoadPattern.ClosedLoop(2), new LoadPattern.ClosedLoop(8)))
        .withWindow(new VirtualFleet.Window(Duration.ofSeconds(3), Duration.ofSeconds(8), Duration.ofSeconds(30)));
  }

  @Test
  void aSmallBenchmarkWritesEveryReport(@TempDir Path dir) throws Exception {
    BenchmarkResult result = Benchmark.run(tiny(), Benchmark.Progress.NONE, 1);
    assertThat(result.runs()).hasSize(3 * 2 * 4);
    assertThat(result.workloads()).containsExactly("shared-prefix", "multi-turn", "unique");
    assertThat(result.routers()).containsExactly(Routers.OURS, Routers.RANDOM, Routers.LEAST_REQUEST,
        Routers.ORACLE);
    for (RunResult r : result.runs()) {
      assertThat(r.requests()).as(r.router() + " " + r.workload()).isPositive();
      assertThat(r.finished()).isEqualTo(r.requests());
    }
    assertThat(result.pooledHitRate("shared-prefix", Routers.OURS))
        .isGreaterThan(result.pooledHitRate("shared-prefix", Routers.RANDOM));

    Reports.Written w = Reports.writeAll(result, dir, "tiny");
    JsonNode json = new ObjectMapper().readTree(w.json().toFile());
    assertThat(json.get("scenario").asText()).isEqualTo("smoke");
    assertThat(json.get("runs")).hasSize(24);
    assertThat(json.get("runs").get(0).get("ttftSeconds").get("p50").asDouble()).isPositive();
    assertThat(json.get("targets").size()).isPositive();
    List<String> csv = Files.readAllLines(w.csv());
    assertThat(csv).hasSize(25);
    assertThat(csv.get(0)).startsWith("workload,router,load,x,");
    String html = Files.readString(w.html());
    assertThat(html).contains("echarts.init").contains("\"scenario\":\"smoke\"").contains("Apache Software Foundation");
    assertThat(html).doesNotContain("</script><script>const data = </script>");
    assertThat(Files.readString(w.table())).contains("== shared-prefix ==").contains("Targets for");
  }

  @Test
  void ourRouterWithTheApproximateIndexIsNotAComparisonRouterOfTheTargets() {
    // The issue compares our router with every comparison router; kinference-approx is ours, and a 0.5% gap to it
    // on multi-turn was reported as a missed target.
    List<String> checked = targetNames(tiny().withWorkloads(List.of("unique"))
        .withRouters(List.of(Routers.OURS, Routers.OURS_APPROX, Routers.RANDOM)));
    assertThat(checked).contains("unique: peak goodput vs random [at least equal]")
        .noneMatch(name -> name.contains(Routers.OURS_APPROX));
  }

  @Test
  void theTargetsAgainstRandomAreCheckedOnKinferencesExperimentOnly() {
    List<String> workloads = List.of("shared-prefix", "unique");
    List<String> routers = List.of(Routers.OURS, Routers.RANDOM, Routers.LEAST_REQUEST);
    List<String> smoke = targetNames(tiny().withWorkloads(workloads).withRouters(routers));
    assertThat(smoke).contains("shared-prefix: peak goodput vs random [at least equal]")
        .doesNotContain("shared-prefix: median TTFT vs random [>= 95.0% lower]",
            "shared-prefix: peak goodput vs random [>= 10.00x]", "unique: p95 TTFT vs least-request [no worse]");
    List<String> paper = targetNames(Scenarios.kinferencePaper().withWorkloads(workloads).withRouters(routers)
        .withWindow(new VirtualFleet.Window(Duration.ofSeconds(3), Duration.ofSeconds(8), Duration.ofSeconds(30))));
    assertThat(paper).contains("shared-prefix: median TTFT vs random [>= 95.0% lower]",
        "shared-prefix: peak goodput vs random [>= 10.00x]", "unique: p95 TTFT vs least-request [no worse]",
        "shared-prefix: peak goodput vs random [at least equal]");
  }

  /** Each target checked, as "name [target]". */
  private static List<String> targetNames(Benchmark.Scenario scenario) {
    return Targets.evaluate(Benchmark.run(scenario.withLoads(List.of(new LoadPattern.ClosedLoop(2))),
        Benchmark.Progress.NONE, 1)).stream().map(c -> c.name() + " [" + c.target() + "]").toList();
  }

  @Test
  void theResultDoesNotDependOnTheThreadCount() {
    Benchmark.Scenario s = tiny().withWorkloads(List.of("shared-prefix"))
        .withRouters(List.of(Routers.OURS, Routers.RANDOM));
    BenchmarkResult one = Benchmark.run(s, Benchmark.Progress.NONE, 1);
    BenchmarkResult two = Benchmark.run(s, Benchmark.Progress.NONE, 2);
    assertThat(Reports.csv(two).lines().map(BenchmarkTest::withoutWallTime).toList())
        .isEqualTo(Reports.csv(one).lines().map(BenchmarkTest::withoutWallTime).toList());
  }

  private static String withoutWallTime(String csvLine) {
    return csvLine.substring(0, csvLine.lastIndexOf(','));
  }

  @Test
  void thePlanAppliesItsOverridesAndRejectsNonsense(@TempDir Path dir) {
    BenchmarkPlan plan = new BenchmarkPlan("smoke", null, 1, SAME_FLEET, List.of(Routers.OURS, Routers.RANDOM),
        List.of("unique"), List.of(3), List.of(), 2, 5, 99L, 1, false, 2,
        new BenchmarkPlan.RouterViewOverride(Duration.ofMillis(200), null, Duration.ofMillis(40)), null, null,
        dir);
    Benchmark.Scenario s = plan.toScenario();
    assertThat(s.routers()).containsExactly(Routers.OURS, Routers.RANDOM);
    assertThat(s.workloads()).singleElement().satisfies(w -> assertThat(w.loads())
        .containsExactly(new LoadPattern.ClosedLoop(3)));
    assertThat(s.window().measure()).isEqualTo(Duration.ofSeconds(5));
    assertThat(s.fleet().seed()).isEqualTo(99);
    assertThat(s.fleet().scrapeInterval()).isEqualTo(Duration.ofMillis(200));
    assertThat(s.fleet().metricsDelay()).as("the scenario's").isEqualTo(Duration.ofMillis(5));
    assertThat(s.fleet().kvEventDelay()).isEqualTo(Duration.ofMillis(40));
    assertThat(s.repeats()).isEqualTo(2);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    plan.run(new PrintStream(out, true, StandardCharsets.UTF_8), true);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("Report:").contains("smoke.html");
    assertThat(dir.resolve("smoke.html")).exists();

    assertThatThrownBy(() -> new BenchmarkPlan("nope", null, 1, SAME_FLEET, List.of(), List.of(), List.of(),
        List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir).toScenario())
        .hasMessageContaining("unknown scenario").hasMessageContaining("smoke");
    assertThatThrownBy(() -> new BenchmarkPlan("smoke", null, 1, SAME_FLEET, List.of("magic"), List.of(), List.of(),
        List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir).toScenario())
        .hasMessageContaining("unknown router").hasMessageContaining(Routers.OURS_NO_TIER);
    assertThatThrownBy(() -> new BenchmarkPlan("smoke", null, 1, SAME_FLEET, List.of(), List.of(), List.of(2),
        List.of(1.0), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir))
        .hasMessageContaining("not both");
    assertThatThrownBy(() -> new BenchmarkPlan.RouterViewOverride(Duration.ZERO, null, null))
        .hasMessageContaining("scrape interval must be positive: 0 ms");
    assertThatThrownBy(() -> new BenchmarkPlan.RouterViewOverride(null, null, Duration.ofMillis(-1)))
        .hasMessageContaining("must not be negative");
  }

  @Test
  void aScenarioRunsOnAnotherFleetKeepingItsServedModelName(@TempDir Path dir) {
    BenchmarkPlan.FleetOverride big = new BenchmarkPlan.FleetOverride(256, GpuSpec.H100, ModelSpec.QWEN3_8B, 2);
    Benchmark.Scenario s = new BenchmarkPlan(Scenarios.KINFERENCE_PAPER, null, 1, big, List.of(), List.of(),
        List.of(), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir)
        .toScenario();
    Benchmark.Scenario paper = Scenarios.named(Scenarios.KINFERENCE_PAPER);
    assertThat(s.fleet().servers()).isEqualTo(256);
    assertThat(s.fleet().engine().describe()).isEqualTo("2x H100, Qwen3-8B");
    assertThat(s.fleet().engine().servedModelName()).as("the workloads still address the fleet")
        .isEqualTo(paper.fleet().engine().servedModelName());
    assertThat(s.description()).endsWith("servers overridden: 256x (2x H100, Qwen3-8B)");
    Benchmark.Scenario servers = new BenchmarkPlan("smoke", null, 1, BenchmarkPlan.FleetOverride.servers(16),
        List.of(), List.of(), List.of(), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE,
        null, null, dir).toScenario();
    assertThat(servers.fleet().servers()).isEqualTo(16);
    assertThat(servers.fleet().engine()).as("the smoke fleet's small KV cache kept")
        .isEqualTo(Scenarios.named("smoke").fleet().engine());
    assertThatThrownBy(() -> BenchmarkPlan.FleetOverride.servers(5000)).hasMessageContaining("[1, 4096]: 5000");
  }

  @Test
  void thePlanReshapesTheWorkloadsAndTheTenantMixsTenants(@TempDir Path dir) {
    SharedPrefixShape longPrompts = SharedPrefixShape.of(List.of(16, 6, 18000, 1000, 100));
    MultiTurnShape longMessages = MultiTurnShape.of(List.of(4, 2000, 4, 12, 2000, 500, 2500));
    Benchmark.Scenario s = new BenchmarkPlan(Scenarios.KINFERENCE_PAPER, null, 1, SAME_FLEET, List.of(), List.of(),
        List.of(), List.of(), -1, 0, null, 1, true, 1, BenchmarkPlan.RouterViewOverride.NONE, longPrompts,
        longMessages, dir).toScenario();
    assertThat(s.describeWorkload("shared-prefix"))
        .isEqualTo("16 groups x 6 users, 18000-token system prompt + 1000-token question, 100 output");
    assertThat(s.describeWorkload("multi-turn")).isEqualTo("4-12 turns of 2000-token messages and 500-token "
        + "answers, 4 system prompts of 2000 tokens, think time 2.5 s");
    assertThat(s.describeWorkload("tenant-mix")).contains("docs-bot 40%: shared-prefix/docs-bot (16 groups x 6 "
        + "users, 18000-token system prompt").contains("chat 40%: multi-turn/chat (4-12 turns of 2000-token");
    assertThat(s.describeWorkload("unique")).as("unchanged").startsWith("2000-token prompts");
    assertThat(s.workloads().getFirst().loads()).as("the scenario's sweep").hasSize(7);

    Benchmark.Scenario unchanged = new BenchmarkPlan(Scenarios.KINFERENCE_PAPER, null, 1, SAME_FLEET, List.of(),
        List.of(), List.of(), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null,
        dir).toScenario();
    assertThat(unchanged.describeWorkload("shared-prefix")).startsWith("48 groups x 6 users, 6000-token");

    assertThatThrownBy(() -> SharedPrefixShape.of(List.of(16, 6, 18000)))
        .hasMessageContaining("GROUPS,USERS,SYSTEM,QUESTION,OUTPUT");
    assertThatThrownBy(() -> SharedPrefixShape.of(List.of(0, 6, 18000, 1000, 100)))
        .hasMessageContaining("invalid shared-prefix shape");
    assertThatThrownBy(() -> MultiTurnShape.of(List.of(4, 2000, 12, 4, 1000, 500, 5000)))
        .hasMessageContaining("invalid multi-turn shape").hasMessageContaining("min <= max");
    assertThatThrownBy(() -> MultiTurnShape.of(List.of(4, 2000)))
        .hasMessageContaining("APPS,SYSTEM,MIN_TURNS,MAX_TURNS,MESSAGE,ANSWER,THINK_MS");
  }

  @Test
  void aTraceReplaysThroughTheFleet(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.jsonl");
    try (var in = getClass().getResourceAsStream("/traces/mooncake-sample.jsonl")) {
      Files.copy(java.util.Objects.requireNonNull(in), trace);
    }
    Benchmark.Scenario s = Scenarios.trace(trace, 1, 2).withRouters(List.of(Routers.OURS, Routers.RANDOM));
    BenchmarkResult result = Benchmark.run(s, Benchmark.Progress.NONE, 1);
    assertThat(result.runs()).hasSize(2);
    for (RunResult r : result.runs()) {
      assertThat(r.requests()).isEqualTo(200);
      assertThat(r.finished()).isEqualTo(200);
    }
    assertThat(result.pooledHitRate("trace", Routers.OURS)).isGreaterThan(result.pooledHitRate("trace",
        Routers.RANDOM));
  }

  @Test
  void aTraceRunSaysTheWholeTraceIsMeasured(@TempDir Path dir) throws Exception {
    Path trace = sampleTrace(dir);
    Benchmark.Scenario s = Scenarios.trace(trace, 1, 3).withRouters(List.of(Routers.RANDOM));
    String table = Reports.table(Benchmark.run(s, Benchmark.Progress.NONE, 1));
    assertThat(table).contains("the whole trace measured (92 s)").doesNotContain("0 s measured");
  }

  @Test
  void aTraceTooHeavyForTheFleetIsWarnedAboutWithAFleetSizeThatFits(@TempDir Path dir) throws Exception {
    Path trace = sampleTrace(dir);
    BenchmarkPlan fits = new BenchmarkPlan("smoke", trace, 1, BenchmarkPlan.FleetOverride.servers(3), List.of(Routers.RANDOM), List.of(), List.of(),
        List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir);
    assertThat(fits.traceSizingWarning(fits.toScenario())).isEmpty();
    BenchmarkPlan tenTimes = new BenchmarkPlan("smoke", trace, 10, BenchmarkPlan.FleetOverride.servers(3), List.of(Routers.RANDOM), List.of(),
        List.of(), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir);
    String warning = tenTimes.traceSizingWarning(tenTimes.toScenario());
    assertThat(warning).contains("every router will saturate").contains("--servers");
    int recommended = Integer.parseInt(warning.replaceAll("(?s).*--servers (\\d+).*", "$1"));
    assertThat(recommended).isGreaterThan(3);
    // on the recommended fleet, the fastest replay finishes every request in time under a load balancer
    Benchmark.Scenario s = Scenarios.trace(trace, 10, recommended).withRouters(List.of("round-robin"));
    RunResult r = Benchmark.run(s, Benchmark.Progress.NONE, 1).runs().get(0);
    assertThat(r.metSlo()).isGreaterThanOrEqualTo(r.requests() * 9 / 10);
    BenchmarkPlan enough = new BenchmarkPlan("smoke", trace, 10, BenchmarkPlan.FleetOverride.servers(recommended), List.of(Routers.RANDOM), List.of(),
        List.of(), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir);
    assertThat(enough.traceSizingWarning(enough.toScenario())).isEmpty();
  }

  @Test
  void requestsThatNeverGetAFirstTokenCountInTheTtftWithTheTimeTheyWaited() {
    // An open loop far beyond the fleet: most requests are still queued when the drain limit ends the run. Leaving
    // them out made the TTFT percentiles improve as the load rose.
    Benchmark.Scenario s = Scenarios.smoke().withRouters(List.of(Routers.RANDOM)).withWorkloads(List.of("unique"))
        .withLoads(List.of(new LoadPattern.Poisson(600)))
        .withWindow(new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(2)));
    BenchmarkResult result = Benchmark.run(s, Benchmark.Progress.NONE, 1);
    RunResult r = result.runs().get(0);
    assertThat(r.started()).isLessThan(r.requests() / 2);
    assertThat(r.finished()).isLessThanOrEqualTo(r.started());
    assertThat(r.ttftMicros().getTotalCount()).isEqualTo(r.requests());
    // more than half never started, so the median is one of theirs: at least the 2 s they waited after the window
    assertThat(r.ttftSeconds(50)).isGreaterThanOrEqualTo(2.0);
    assertThat(result.pooledFinished("unique", Routers.RANDOM)).isEqualTo(r.finished());
    assertThat(Reports.table(result)).contains("done");
    assertThat(Reports.csv(result)).startsWith("workload,router,load,x,requests,started,finished,");
  }

  private Path sampleTrace(Path dir) throws java.io.IOException {
    Path trace = dir.resolve("t.jsonl");
    try (var in = getClass().getResourceAsStream("/traces/mooncake-sample.jsonl")) {
      Files.copy(java.util.Objects.requireNonNull(in), trace);
    }
    return trace;
  }

  @Test
  void theReasoningWorkloadIsAddedWhenNamedWithShortPromptsAndLongAnswers(@TempDir Path dir) {
    BenchmarkPlan plan = new BenchmarkPlan("kinference-paper", null, 1, SAME_FLEET, List.of(Routers.OURS), List.of("reasoning"),
        List.of(8), List.of(), -1, 0, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir);
    Benchmark.Scenario s = plan.toScenario();
    assertThat(s.workloads()).singleElement().satisfies(w -> assertThat(w.name()).isEqualTo("reasoning"));
    dev.kinference.sim.workload.Workload reasoning = s.workloads().get(0).factory().apply(1);
    java.util.SplittableRandom random = new java.util.SplittableRandom(3);
    long prompts = 0;
    long outputs = 0;
    int n = 4000;
    for (int i = 0; i < n; i++) {
      var request = java.util.Objects.requireNonNull(reasoning.newSession(random, i).nextRequest());
      prompts += request.promptTokens().length;
      outputs += request.maxTokens();
      assertThat(request.maxTokens()).isBetween(1, 32_000);
    }
    assertThat(prompts / n).isBetween(150L, 260L);
    assertThat(outputs / n).as("mean output, the lognormal's tail cut at 32,000").isBetween(7_400L, 8_600L);
    assertThat(reasoning.describe()).contains("8000 tokens on average");
  }
}
