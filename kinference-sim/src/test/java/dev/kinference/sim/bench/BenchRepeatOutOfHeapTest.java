package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.Workload;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The bug: {@code kinference bench --repeat 20} ran out of a 5 GB heap (and 40 repeats of four agentic load points
 * out of 8 GB) because memory grew with every run: each run of our router stayed reachable from the benchmark's
 * thread with its whole simulated fleet and workload, and every repeat's result was kept until the end. After a
 * benchmark, only the merged figures may remain: no run's workload (its prompts, sessions and, through the run,
 * servers and requests), and one merged result per point of the same shape however many seeds it merges.
 */
class BenchRepeatOutOfHeapTest {

  private static final int REPEATS = 4;

  /** The smoke fleet's shared-prefix workload through ours and random, each run's workload watched weakly. */
  private static Benchmark.Scenario watched(List<WeakReference<Workload>> workloads) {
    Benchmark.Scenario smoke = Scenarios.smoke();
    Benchmark.WorkloadSpec spec = smoke.workloads().stream().filter(w -> w.name().equals("shared-prefix"))
        .findFirst().orElseThrow();
    Benchmark.WorkloadSpec probed = new Benchmark.WorkloadSpec(spec.name(), seed -> {
      Workload w = spec.factory().apply(seed);
      workloads.add(new WeakReference<>(w));
      return w;
    }, List.of(new LoadPattern.ClosedLoop(2), new LoadPattern.ClosedLoop(6)));
    return new Benchmark.Scenario(smoke.name(), smoke.description(), smoke.fleet(), List.of(probed),
        new VirtualFleet.Window(Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofSeconds(20)), smoke.slo(),
        List.of(Routers.OURS, Routers.RANDOM), REPEATS);
  }

  private static long stillReachable(List<WeakReference<Workload>> probes) {
    // a full collection clears every weakly reachable referent; a few tries cover a collector that defers the hint
    for (int i = 0; i < 10 && probes.stream().anyMatch(p -> p.get() != null); i++) {
      System.gc();
    }
    return probes.stream().filter(p -> p.get() != null).count();
  }

  @Test
  void noRunsWorkloadOrFleetOutlivesItsRunWhileTheBenchmarksResultIsHeld() {
    List<WeakReference<Workload>> workloads = new CopyOnWriteArrayList<>();
    BenchmarkResult result = Benchmark.run(watched(workloads), Benchmark.Progress.NONE, 1);

    assertThat(workloads).hasSize(2 * 2 * REPEATS);
    assertThat(stillReachable(workloads)).as("workloads of finished runs still reachable").isZero();
    assertThat(result.runs()).hasSize(2 * 2).allSatisfy(r -> assertThat(r.repeats()).isEqualTo(REPEATS));
  }

  @Test
  void aMergedResultHoldsOneSeedsServerMetricsHoweverManySeedsItMerges() {
    BenchmarkResult result = Benchmark.run(watched(new ArrayList<>()), Benchmark.Progress.NONE, 1);
    int servers = Scenarios.smoke().fleet().servers();

    assertThat(result.runs()).allSatisfy(r -> {
      assertThat(r.repeats()).isEqualTo(REPEATS);
      assertThat(r.stats().finalMetrics()).hasSize(servers);
    });
  }

  @Test
  void repeatsMergeTheSameOnOneThreadAsOnTwo() {
    BenchmarkResult one = Benchmark.run(watched(new CopyOnWriteArrayList<>()), Benchmark.Progress.NONE, 1);
    BenchmarkResult two = Benchmark.run(watched(new CopyOnWriteArrayList<>()), Benchmark.Progress.NONE, 2);

    assertThat(Reports.csv(two).lines().map(BenchRepeatOutOfHeapTest::withoutWallTime).toList())
        .isEqualTo(Reports.csv(one).lines().map(BenchRepeatOutOfHeapTest::withoutWallTime).toList());
  }

  private static String withoutWallTime(String csvLine) {
    return csvLine.substring(0, csvLine.lastIndexOf(','));
  }
}
