package dev.kinference.sim.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.LoadPattern.Ladder;
import dev.kinference.sim.workload.LoadPattern.Ladder.Stage;
import dev.kinference.sim.workload.UniquePromptWorkload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The staged load of inference-perf ({@link LoadPattern.Ladder}) on the virtual fleet. */
class LadderLoadTest {

  private static final EngineSpec ENGINE = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1).withNumGpuBlocks(3000);
  /** A warm-up of 40 requests, then 10 and 30: 200-token answers last seconds, longer than a stage's sends. */
  private static final List<Stage> STAGES = List.of(new Stage(20, Duration.ofSeconds(2)),
      new Stage(5, Duration.ofSeconds(2)), new Stage(30, Duration.ofSeconds(1)));

  /** What a run tells its observer: stage starts and every measured request. */
  private static final class Recorder implements RunObserver {
    final List<Long> starts = new ArrayList<>();
    final List<CompletedRequest> requests = new ArrayList<>();

    @Override
    public void onStageStart(int stage, long nanos) {
      assertThat(stage).isEqualTo(starts.size());
      starts.add(nanos);
    }

    @Override
    public void onRequest(CompletedRequest request) {
      requests.add(request);
    }

    List<CompletedRequest> sentIn(int stage) {
      long from = starts.get(stage);
      long to = stage + 1 < starts.size() ? starts.get(stage + 1) : Long.MAX_VALUE;
      return requests.stream().filter(r -> r.sentNanos() >= from && r.sentNanos() < to).toList();
    }
  }

  private static Recorder run(Ladder ladder, Duration drainLimit) {
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(2, ENGINE, 7));
    Recorder recorder = new Recorder();
    VirtualFleet.RunStats stats = fleet.run(new UniquePromptWorkload("Qwen3-8B", 300, 200, null, 1), ladder,
        new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(1), drainLimit), new VirtualFleetTest.ProbeRouter(),
        recorder);
    // every request is measured, the warm-up's too, as inference-perf's summary pools them
    assertThat(recorder.requests).hasSize((int) stats.sent());
    assertThat(stats.measured()).isEqualTo(stats.sent());
    return recorder;
  }

  @Test
  void aDrainedLadderSendsEachStagesCountAndStartsTheNextAnIntervalAfterItsLastRequestEnded() {
    Recorder r = run(new Ladder(STAGES, Duration.ofSeconds(2), true), Duration.ofMinutes(5));
    assertThat(r.requests).hasSize(80);
    assertThat(r.starts).hasSize(3).first().isEqualTo(0L);
    int[] expected = {40, 10, 30};
    for (int stage = 0; stage < 3; stage++) {
      List<CompletedRequest> sent = r.sentIn(stage);
      assertThat(sent).hasSize(expected[stage]).allSatisfy(c -> assertThat(c.finished()).isTrue());
      if (stage < 2) {
        long lastEnd = sent.stream().mapToLong(CompletedRequest::finishNanos).max().orElseThrow();
        assertThat(r.starts.get(stage + 1)).isEqualTo(lastEnd + 2_000_000_000L);
      }
    }
    // the answers outlast the stage's sends: the drain is real time, not the stage's duration
    assertThat(r.starts.get(1)).isGreaterThan(2_000_000_000L + 2_000_000_000L);
  }

  @Test
  void aContinuousLadderStartsEachStageWhenThePreviousOnesTimeIsUpWithItsRequestsStillRunning() {
    Recorder r = run(new Ladder(STAGES, Duration.ofSeconds(2), false), Duration.ofMinutes(5));
    assertThat(r.sentIn(2)).hasSize(30); // the last stage sends all of its own
    assertThat(r.starts).containsExactly(0L, 2_000_000_000L, 4_000_000_000L);
    for (int stage = 0; stage < 2; stage++) {
      long nextStart = r.starts.get(stage + 1);
      // sends stop when the stage's time is up, at most its floor(rate x duration)
      assertThat(r.sentIn(stage)).hasSizeLessThanOrEqualTo(STAGES.get(stage).sessions())
          .allSatisfy(c -> assertThat(c.sentNanos()).isLessThan(nextStart));
      assertThat(r.sentIn(stage)).anySatisfy(c -> assertThat(c.finishNanos()).isGreaterThan(nextStart));
    }
  }

  /** Turns away every other request, as an EPP's admission control answers 429; the others go round robin. */
  private static final class HalfRejecting implements FleetRouter {
    private final VirtualFleetTest.ProbeRouter inner = new VirtualFleetTest.ProbeRouter();
    private int count;

    @Override
    public String name() {
      return "half-rejecting";
    }

    @Override
    public void start(FleetView fleet) {
      inner.start(fleet);
    }

    @Override
    public Decision route(dev.kinference.sim.workload.ClientRequest request, long nowNanos) {
      return count++ % 2 == 0 ? () -> FleetRouter.REJECTED : inner.route(request, nowNanos);
    }
  }

  @Test
  void aRequestTheRouterTurnsAwayEndsAtItsSendAndTheStageStillDrainsAndMovesOn() {
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(2, ENGINE, 7));
    Recorder r = new Recorder();
    VirtualFleet.RunStats stats = fleet.run(new UniquePromptWorkload("Qwen3-8B", 300, 200, null, 1),
        new Ladder(STAGES, Duration.ofSeconds(2), true),
        new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(1), Duration.ofMinutes(5)), new HalfRejecting(), r);
    // every stage still sends its count; half of them are turned away, reported at once and never dispatched
    assertThat(r.requests).hasSize(80);
    assertThat(stats.sent()).isEqualTo(80);
    assertThat(stats.dispatched()[0] + stats.dispatched()[1]).isEqualTo(40);
    assertThat(r.requests.stream().filter(CompletedRequest::rejected)).hasSize(40).allSatisfy(c -> {
      assertThat(c.started()).isFalse();
      assertThat(c.finished()).isFalse();
      assertThat(c.finishNanos()).isEqualTo(c.sentNanos());
      assertThat(c.ttftOrWaitNanos()).isZero();
    });
    assertThat(r.requests.stream().filter(c -> !c.rejected())).hasSize(40)
        .allSatisfy(c -> assertThat(c.finished()).isTrue());
    assertThat(r.starts).hasSize(3);
    for (int stage = 0; stage < 2; stage++) {
      long lastEnd = r.sentIn(stage).stream().mapToLong(CompletedRequest::finishNanos).max().orElseThrow();
      assertThat(r.starts.get(stage + 1)).isEqualTo(lastEnd + 2_000_000_000L);
    }
  }

  @Test
  void aClosedLoopClientCannotBeTurnedAwayForItWouldResendAtOnce() {
    VirtualFleet fleet = VirtualFleet.of(VirtualFleet.Settings.of(2, ENGINE, 7));
    assertThatThrownBy(() -> fleet.run(new UniquePromptWorkload("Qwen3-8B", 300, 20, null, 1),
        new LoadPattern.ClosedLoop(2),
        new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(10)), new HalfRejecting(),
        new Recorder()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("half-rejecting turned a request away "
            + "under a closed-loop load");
  }

  @Test
  void llmdsPublishedLadderIsAWarmUpOfOneFullSetAndSixteenStages() {
    Ladder ladder = Ladder.llmdPublished(true);
    assertThat(ladder.stages()).hasSize(17);
    assertThat(ladder.stages().getFirst()).isEqualTo(new Stage(15, Duration.ofSeconds(50)));
    assertThat(ladder.stages().getFirst().sessions()).isEqualTo(750);
    assertThat(ladder.stages().get(1)).isEqualTo(new Stage(3, Duration.ofSeconds(20)));
    assertThat(ladder.stages().getLast()).isEqualTo(new Stage(60, Duration.ofSeconds(25)));
    assertThat(ladder.stages().stream().mapToDouble(Stage::ratePerSecond).toArray()).containsExactly(15, 3, 10, 15,
        20, 22, 25, 30, 35, 40, 43, 46, 49, 52, 55, 57, 60);
    assertThat(ladder.sessions()).isEqualTo(750 + 16_334);
    assertThat(ladder.sendTime()).isEqualTo(Duration.ofSeconds(50 + 452));
    assertThat(ladder.interval()).isEqualTo(Duration.ofSeconds(2));
    assertThat(Ladder.llmdPublished(false).drainBetweenStages()).isFalse();
  }

  @Test
  void aBadLadderIsRefusedWithTheReason() {
    assertThatThrownBy(() -> new Ladder(List.of(), Duration.ZERO, true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one stage");
    assertThatThrownBy(() -> new Stage(0, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rate must be positive");
    assertThatThrownBy(() -> new Stage(3, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("duration must be positive");
    assertThatThrownBy(() -> new Ladder(STAGES, Duration.ofSeconds(-1), true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("interval");
    assertThat(new Stage(2.5, Duration.ofSeconds(3)).sessions()).isEqualTo(7);
  }
}
