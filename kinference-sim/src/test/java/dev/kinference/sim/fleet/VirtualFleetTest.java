package dev.kinference.sim.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.SharedPrefixWorkload;
import dev.kinference.sim.workload.UniquePromptWorkload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VirtualFleetTest {

  private static final EngineSpec ENGINE = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1).withNumGpuBlocks(3000);
  private static final VirtualFleet.Window WINDOW =
      new VirtualFleet.Window(Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(30));

  /** Round robin that records what it is told and when. */
  static final class ProbeRouter implements FleetRouter {
    final List<long[]> scrapes = new ArrayList<>(); // server, taken, delivered
    final List<long[]> eventDeliveries = new ArrayList<>(); // server, step end, delivered
    final List<Long> firstTokens = new ArrayList<>();
    int inFlight;
    int maxInFlight;
    int finished;
    private int next;
    private int servers;

    @Override
    public String name() {
      return "probe";
    }

    @Override
    public void start(FleetView fleet) {
      servers = fleet.size();
      assertThat(fleet.endpoints()).extracting(e -> e.id()).startsWith("sim-0");
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      int s = next++ % servers;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Decision() {
        @Override
        public int server() {
          return s;
        }

        @Override
        public void onFirstToken(long now) {
          firstTokens.add(now);
        }

        @Override
        public void onFinished(RequestOutcome outcome, long now) {
          inFlight--;
          finished++;
        }
      };
    }

    @Override
    public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
      assertThat(metrics.timestampNanos()).isEqualTo(takenAtNanos);
      scrapes.add(new long[] {server, takenAtNanos, nowNanos});
    }

    @Override
    public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
      eventDeliveries.add(new long[] {server, batch.timestampNanos(), nowNanos});
    }
  }

  private static VirtualFleet fleet(long seed) {
    return VirtualFleet.of(new VirtualFleet.Settings(3, ENGINE, Duration.ofMillis(50), Duration.ofMillis(7),
        Duration.ofMillis(11), Duration.ofMillis(2), seed));
  }

  private static SharedPrefixWorkload workload() {
    return new SharedPrefixWorkload("Qwen3-8B", 6, 4, 1000, 100, 30, null, 1);
  }

  @Test
  void theRouterSeesMetricsAsAScraperAndEventsAfterTheirDelay() {
    ProbeRouter probe = new ProbeRouter();
    fleet(1).run(workload(), new LoadPattern.ClosedLoop(6), WINDOW, probe, new RunObserver() {});
    assertThat(probe.scrapes).isNotEmpty();
    for (long[] s : probe.scrapes) {
      assertThat(s[2] - s[1]).isEqualTo(7_000_000L);
    }
    List<Long> server0 = probe.scrapes.stream().filter(s -> s[0] == 0).map(s -> s[1]).toList();
    for (int i = 1; i < server0.size(); i++) {
      assertThat(server0.get(i) - server0.get(i - 1)).isEqualTo(50_000_000L);
    }
    assertThat(probe.eventDeliveries).isNotEmpty().allSatisfy(e -> assertThat(e[2] - e[1]).isEqualTo(11_000_000L));
    assertThat(probe.finished).isPositive();
  }

  @Test
  void aClosedLoopKeepsAtMostItsConcurrencyInFlight() {
    ProbeRouter probe = new ProbeRouter();
    VirtualFleet.RunStats stats = fleet(2).run(workload(), new LoadPattern.ClosedLoop(5), WINDOW, probe,
        new RunObserver() {});
    assertThat(probe.maxInFlight).isEqualTo(5);
    assertThat(stats.sent()).isGreaterThan(stats.measured()).isPositive();
    assertThat(probe.inFlight).isZero();
  }

  @Test
  void anOpenLoopSendsAtItsRate() {
    ProbeRouter probe = new ProbeRouter();
    VirtualFleet.RunStats stats = fleet(3).run(new UniquePromptWorkload("Qwen3-8B", 300, 20, null, 1),
        new LoadPattern.Poisson(20), WINDOW, probe, new RunObserver() {});
    // 20 per second over 12 s of sending; a Poisson count of mean 240 is within 180..300 with near certainty
    assertThat(stats.sent()).isBetween(180L, 300L);
  }

  @Test
  void theSameSeedGivesTheSameRunAndAnotherSeedAnotherOne() {
    List<Long> a = ttfts(5);
    List<Long> b = ttfts(5);
    List<Long> c = ttfts(6);
    assertThat(a).isEqualTo(b);
    assertThat(a).isNotEqualTo(c);
  }

  private List<Long> ttfts(long seed) {
    List<Long> out = new ArrayList<>();
    fleet(seed).run(workload(), new LoadPattern.ClosedLoop(4), WINDOW, new ProbeRouter(), new RunObserver() {
      @Override
      public void onRequest(CompletedRequest request) {
        out.add(request.ttftNanos());
      }
    });
    return out;
  }

  @Test
  void measuredRequestsAreThoseSentInTheWindow() {
    List<CompletedRequest> seen = new ArrayList<>();
    fleet(4).run(workload(), new LoadPattern.ClosedLoop(3), WINDOW, new ProbeRouter(), new RunObserver() {
      @Override
      public void onRequest(CompletedRequest request) {
        seen.add(request);
      }
    });
    assertThat(seen).isNotEmpty().allSatisfy(r -> {
      assertThat(r.sentNanos()).isBetween(WINDOW.measureStartNanos(), WINDOW.measureEndNanos() - 1);
      assertThat(r.finished()).isTrue();
      assertThat(r.ttftNanos()).isPositive();
      assertThat(r.e2eNanos()).isGreaterThanOrEqualTo(r.ttftNanos());
    });
  }

  @Test
  void aReplayNeedsATimedWorkload() {
    assertThatThrownBy(() -> fleet(1).run(workload(), new LoadPattern.Replay(1), WINDOW, new ProbeRouter(),
        new RunObserver() {})).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timed");
  }
}
