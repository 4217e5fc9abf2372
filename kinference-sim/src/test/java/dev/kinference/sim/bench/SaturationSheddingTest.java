package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.FinishReason;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.CompletedRequest;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.workload.ClientRequest;
import org.junit.jupiter.api.Test;

/** The admission control of llm-d's published EPP (GAIE v0.5) in front of a router: {@code NAME+shed}. */
class SaturationSheddingTest {

  private static final long MS = 1_000_000L;

  private final FakeView view = new FakeView(2);
  private final EngineMetrics idle = view.engine(0).metrics();

  /** The idle engine's metrics with {@code waiting} queued and {@code kv} of the KV cache in use. */
  private EngineMetrics metrics(int waiting, double kv) {
    EngineMetrics m = idle;
    return new EngineMetrics(m.timestampNanos(), waiting, m.running(), kv, m.blockSize(), m.numGpuBlocks(),
        m.prefixCacheQueries(), m.prefixCacheHits(), m.promptTokens(), m.generationTokens(), m.preemptions(),
        m.requestSuccess(), m.ttft(), m.itl(), m.e2e(), m.freeBlocks(), m.cachedBlocks(), m.steps(), m.busyNanos());
  }

  private static boolean turnedAway(FleetRouter router, long now) {
    return router.route(FakeView.request("r" + now, "hello"), now).server() == FleetRouter.REJECTED;
  }

  @Test
  void aRequestIsTurnedAwayOnlyWhileNoServerHasCapacityByTheEppsThresholds() {
    FleetRouter router = Routers.create("random" + Routers.SHEDDING_SUFFIX, 1);
    assertThat(router.name()).isEqualTo("random+shed");
    router.start(view);
    // before any scrape the EPP knows no server with capacity
    assertThat(turnedAway(router, 0)).isTrue();
    // more than 5 waiting on one, more than 80% of KV on the other: saturated
    router.onMetrics(0, metrics(6, 0.10), 0, 10 * MS);
    router.onMetrics(1, metrics(0, 0.81), 0, 10 * MS);
    assertThat(turnedAway(router, 20 * MS)).isTrue();
    // exactly at a threshold still has capacity: the wrapped router decides, among both servers
    router.onMetrics(1, metrics(5, 0.80), 30 * MS, 40 * MS);
    assertThat(turnedAway(router, 50 * MS)).isFalse();
    assertThat(router.route(FakeView.request("x", "hello"), 50 * MS).server()).isBetween(0, 1);
    // metrics older than 200 ms say nothing: the only server with capacity counts as without
    assertThat(turnedAway(router, 240 * MS)).isFalse();
    assertThat(turnedAway(router, 241 * MS)).isTrue();
    assertThat(((SaturationShedding) router).turnedAway()).isEqualTo(3);
    assertThat(Routers.describe("random+shed")).startsWith(Routers.describe("random"))
        .contains("turned away (HTTP 429)");
  }

  @Test
  void aTurnedAwayRequestCountsAsSentAndFailedAndIsInNoLatencyOrOutputFigure() {
    RunResult run = new RunResult("random+shed", "shared-prefix",
        new dev.kinference.sim.workload.LoadPattern.Poisson(1), new Slo(java.time.Duration.ofSeconds(2),
            java.time.Duration.ZERO), 1);
    run.onStageStart(0, 0);
    ClientRequest served = FakeView.request("a", "hello");
    run.onRequest(new CompletedRequest(served, 0, 0, 300 * MS, 1_000 * MS,
        new RequestOutcome("a", FinishReason.LENGTH, 10, 5, 0, 0, 300 * MS, 1_000 * MS, 0), 0));
    run.onRequest(CompletedRequest.rejected(FakeView.request("b", "hello"), 500 * MS));
    assertThat(run.requests()).isEqualTo(2);
    assertThat(run.rejected()).isEqualTo(1);
    assertThat(run.finished()).isEqualTo(1);
    assertThat(run.metSlo()).isEqualTo(1);
    // the p90 is the served request's 0.3 s, not pulled towards the turned-away one's 0 s
    assertThat(run.ttftSeconds(90)).isCloseTo(0.3, org.assertj.core.api.Assertions.within(0.001));
    LadderStages stages = run.ladderStages();
    assertThat(stages.requests(0)).isEqualTo(2);
    assertThat(stages.ttftSeconds(0, 10)).isCloseTo(0.3, org.assertj.core.api.Assertions.within(0.001));
    // 5 output tokens over the stage's span, first send (0) to last end (1 s)
    assertThat(stages.outputTokensPerSecond(0)).isCloseTo(5.0, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(Routers.withoutShedding("random+shed")).isEqualTo("random");
    assertThat(LlmdLadder.published("random+shed")).isSameAs(LlmdLadder.RANDOM);
  }

  @Test
  void aDoubledSuffixIsRefusedByName() {
    assertThatThrownBy(() -> Routers.create("random+shed+shed", 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("router 'random+shed+shed': +shed once is enough");
  }
}
