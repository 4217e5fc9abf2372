package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.LoadPattern.Ladder;
import dev.kinference.sim.workload.LoadPattern.Ladder.Stage;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LlmdLadderTest {

  @Test
  void aLadderRunPoolsEveryRequestAndKeepsEachStagesFiguresAsInferencePerfDoes() {
    Ladder ladder = new Ladder(List.of(new Stage(20, Duration.ofSeconds(2)), new Stage(5, Duration.ofSeconds(2)),
        new Stage(30, Duration.ofSeconds(1))), Duration.ofSeconds(1), true);
    Benchmark.Scenario scenario = Scenarios.smoke().withWorkloads(List.of("shared-prefix"))
        .withLoads(List.of(ladder)).withRouters(List.of("random"))
        .withWindow(new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(1), Duration.ofMinutes(5)))
        .withRepeats(2);
    RunResult run = Benchmark.run(scenario, Benchmark.Progress.NONE, 1).runs().getFirst();
    // two seeds of 40 + 10 + 30 requests, the warm-up stage included in the pooled figures
    assertThat(run.requests()).isEqualTo(160);
    assertThat(run.finished()).isEqualTo(160);
    LadderStages stages = run.ladderStages();
    assertThat(stages.count()).isEqualTo(3);
    assertThat(List.of(stages.requests(0), stages.requests(1), stages.requests(2))).containsExactly(80L, 20L, 60L);
    for (int i = 0; i < 3; i++) {
      // a stage's rate is its output tokens over its span (first send to last end), the spans of both seeds added
      long tokens = (i == 0 ? 80 : i == 1 ? 20 : 60) * 50L; // the smoke shared-prefix answers are 50 tokens
      assertThat(stages.outputTokensPerSecond(i)).isCloseTo(tokens / stages.spanSeconds(i), within(1e-6));
      assertThat(stages.ttftSeconds(i, 90)).isPositive();
    }
    assertThat(stages.meanOutputTokensPerSecond(1))
        .isCloseTo((stages.outputTokensPerSecond(1) + stages.outputTokensPerSecond(2)) / 2, within(1e-9));
    String table = LlmdLadder.table(Benchmark.run(scenario.withRepeats(1), Benchmark.Progress.NONE, 1));
    assertThat(table).contains("random").contains("92.55s").contains("warm 20/s").contains("(0.82 / 1314)");
  }

  @Test
  void llmdsSummaryOutputRateIsTheMeanOfItsSixteenStagesAndItsP90IsPooled() {
    for (LlmdLadder.Published p : List.of(LlmdLadder.PRECISE, LlmdLadder.ESTIMATED, LlmdLadder.RANDOM)) {
      assertThat(p.stageOutputTokensPerSecond()).hasSize(16);
      double mean = p.stageOutputTokensPerSecond().stream().mapToDouble(Double::doubleValue).average().orElseThrow();
      assertThat(mean).isCloseTo(p.outputTokensPerSecond(), within(0.1));
    }
    // random's pooled p90 (92.6 s) is not the mean of its stages' p90s (77.7 s): the summary pools requests
    double meanP90 = LlmdLadder.RANDOM.stageTtftP90().stream().mapToDouble(Double::doubleValue).average()
        .orElseThrow();
    assertThat(meanP90).isCloseTo(77.7, within(0.05));
    assertThat(LlmdLadder.PUBLISHED_RATIO).isCloseTo(1.26, within(0.005));
    assertThat(LlmdLadder.error(0.27, 0.54)).isEqualTo("-50%");
    assertThat(LlmdLadder.error(40.4, 31.1)).isEqualTo("+30%");
  }

  @Test
  void theScenarioIsLlmdsUnderItsPublishedLadderWithItsThreeSchedulers() {
    Benchmark.Scenario s = LlmdLadder.scenario(true);
    assertThat(s.name()).isEqualTo("llm-d");
    assertThat(s.routers()).containsExactly("llm-d-precise", "llm-d-estimated", "random");
    LoadPattern load = s.workloads().getFirst().loads().getFirst();
    assertThat(load).isEqualTo(Ladder.llmdPublished(true));
    assertThat(s.window().warmup()).isZero();
  }
}
