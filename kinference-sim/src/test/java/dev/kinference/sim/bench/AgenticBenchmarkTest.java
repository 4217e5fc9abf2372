package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgenticBenchmarkTest {

  /** Small sessions on the smoke fleet: 500-token system prompt, 4,000-token contexts, 2-6 turns, forks on 30%. */
  private static final List<Integer> SMALL_AGENTS = List.of(500, 4_000, 2, 6, 200, 50, 500, 30);

  private static BenchmarkPlan plan(Path dir, List<String> routers, List<Integer> agentic) {
    return new BenchmarkPlan("smoke", null, 1, BenchmarkPlan.FleetOverride.NONE, routers, List.of("agentic"),
        List.of(6), List.of(), 3, 15, null, 1, false, 1, BenchmarkPlan.RouterViewOverride.NONE, null, null, dir,
        agentic);
  }

  @Test
  void aSmallAgenticBenchmarkRunsEveryRequestToTheEndAndOursKeepsSessionsOnTheirCaches(@TempDir Path dir) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    plan(dir, List.of(Routers.OURS, Routers.RANDOM), SMALL_AGENTS)
        .run(new PrintStream(bytes, true, StandardCharsets.UTF_8), false);
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertThat(printed).contains("== agentic ==").contains("coding-agent sessions: 500-token shared system prompt")
        .contains("agentic: a session holds about");
    BenchmarkResult result = Benchmark.run(plan(dir, List.of(Routers.OURS, Routers.RANDOM), SMALL_AGENTS)
        .toScenario(), Benchmark.Progress.NONE, 1);
    for (RunResult r : result.runs()) {
      assertThat(r.workload()).isEqualTo("agentic");
      assertThat(r.requests()).as(r.router()).isPositive();
      assertThat(r.finished()).as(r.router()).isEqualTo(r.requests());
    }
    assertThat(result.pooledHitRate("agentic", Routers.OURS))
        .isGreaterThan(result.pooledHitRate("agentic", Routers.RANDOM));
    assertThat(Targets.evaluate(result)).singleElement().satisfies(check -> {
      assertThat(check.name()).isEqualTo("agentic: peak goodput vs random");
      assertThat(check.target()).as("the issue's agentic target").isEqualTo("at least 1.20x");
    });
  }

  @Test
  void theDefaultShapeEndsSessionsAtTheFleetsContextAndBadShapesFailBeforeRunning(@TempDir Path dir) {
    BenchmarkPlan p = plan(dir, List.of(Routers.OURS), List.of());
    Benchmark.Scenario s = p.toScenario();
    assertThat(s.workloads()).singleElement().satisfies(w -> assertThat(w.name()).isEqualTo("agentic"));
    int longest = s.fleet().engine().toBuilder().build().config().maxModelLen();
    assertThat(p.agenticShape(s).maxContextTokens()).isEqualTo(longest);
    assertThat(p.agenticShape(s).meanContextTokens()).isEqualTo(55_000);
    assertThatThrownBy(() -> plan(dir, List.of(Routers.OURS), List.of(3000, 55000, 20, 2, 1000, 300, 2000, 10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("turns 20-2");
    assertThatThrownBy(() -> new BenchmarkPlan("smoke", Path.of("t.jsonl"), 1, BenchmarkPlan.FleetOverride.NONE,
        List.of(), List.of("agentic"), List.of(), List.of(), -1, 0, null, 1, false, 1,
        BenchmarkPlan.RouterViewOverride.NONE, null, null, dir)).hasMessageContaining("leave out --trace");
  }
}
