package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.Workload;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;

/**
 * Runs a {@link Scenario}: every workload at every load point through every router, each run on fresh servers with
 * the same seed, so routers face statistically identical traffic.
 */
public final class Benchmark {

  /** Reports how far the benchmark is. Called from the running threads, one call at a time. */
  public interface Progress {
    /** Run {@code runIndex} of {@code runCount} ({@code label}) is {@code runFraction} done. */
    void update(int runIndex, int runCount, String label, double runFraction);

    default void done() {}

    Progress NONE = (i, n, label, f) -> {};
  }

  /**
   * A workload and the load points it is run at.
   *
   * @param name the workload's name in reports
   * @param factory a fresh workload for a seed (workloads keep state)
   * @param loads the sweep
   */
  public record WorkloadSpec(String name, LongFunction<Workload> factory, List<LoadPattern> loads) {
    public WorkloadSpec {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(factory, "factory");
      loads = List.copyOf(loads);
      if (loads.isEmpty()) {
        throw new IllegalArgumentException("workload " + name + " has no load points");
      }
    }
  }

  /**
   * An experiment.
   *
   * @param name short name ({@code kinference-paper})
   * @param description what it reproduces and how it is scaled
   * @param fleet servers and what routers see
   * @param workloads workloads and their sweeps
   * @param window measurement window of each run
   * @param slo the objective goodput counts against
   * @param routers routers to compare (see {@link Routers})
   * @param repeats runs of each point, with seeds {@code seed}, {@code seed + 1}, ...; merged into one result
   */
  public record Scenario(String name, String description, VirtualFleet.Settings fleet, List<WorkloadSpec> workloads,
      VirtualFleet.Window window, Slo slo, List<String> routers, int repeats) {
    public Scenario {
      if (repeats < 1 || repeats > 100) {
        throw new IllegalArgumentException("repeats must be in [1, 100]: " + repeats);
      }
      workloads = List.copyOf(workloads);
      routers = List.copyOf(routers);
      if (workloads.isEmpty() || routers.isEmpty()) {
        throw new IllegalArgumentException("a scenario needs workloads and routers");
      }
      for (String r : routers) {
        Routers.create(r, 0);
      }
    }

    /** A scenario run once per point. */
    public Scenario(String name, String description, VirtualFleet.Settings fleet, List<WorkloadSpec> workloads,
        VirtualFleet.Window window, Slo slo, List<String> routers) {
      this(name, description, fleet, workloads, window, slo, routers, 1);
    }

    /** This scenario with other routers. */
    public Scenario withRouters(List<String> newRouters) {
      return new Scenario(name, description, fleet, workloads, window, slo, newRouters, repeats);
    }

    /** This scenario with another window. */
    public Scenario withWindow(VirtualFleet.Window newWindow) {
      return new Scenario(name, description, fleet, workloads, newWindow, slo, routers, repeats);
    }

    /** This scenario with other fleet settings (seed, delays). */
    public Scenario withFleet(VirtualFleet.Settings newFleet) {
      return new Scenario(name, description, newFleet, workloads, window, slo, routers, repeats);
    }

    /** This scenario with each point run {@code n} times (seeds seed, seed + 1, ...), merged. */
    public Scenario withRepeats(int n) {
      return new Scenario(name, description, fleet, workloads, window, slo, routers, n);
    }

    /** This scenario with only the named workloads. */
    public Scenario withWorkloads(List<String> names) {
      List<WorkloadSpec> kept = workloads.stream().filter(w -> names.contains(w.name())).toList();
      if (kept.isEmpty()) {
        throw new IllegalArgumentException("no workload named " + names + "; known: "
            + workloads.stream().map(WorkloadSpec::name).toList());
      }
      return new Scenario(name, description, fleet, kept, window, slo, routers, repeats);
    }

    /**
     * What the workload named {@code workloadName} is, as a fresh instance of it describes itself; empty if the
     * scenario has none of that name. A workload that cannot be made (a trace file gone since the run) is described
     * by why, so that reporting a finished run never fails on its description.
     */
    public String describeWorkload(String workloadName) {
      return workloads.stream().filter(w -> w.name().equals(workloadName)).findFirst().map(w -> {
        try {
          return w.factory().apply(fleet.seed()).describe();
        } catch (RuntimeException e) {
          return "(not described: " + e.getMessage() + ")";
        }
      }).orElse("");
    }

    /**
     * This scenario with the workload named {@code workloadName} made by {@code factory}, its sweep kept.
     *
     * @throws IllegalArgumentException if the scenario has no workload of that name
     */
    public Scenario withWorkloadFactory(String workloadName, LongFunction<Workload> factory) {
      if (workloads.stream().noneMatch(w -> w.name().equals(workloadName))) {
        throw new IllegalArgumentException("scenario " + name + " has no " + workloadName + " workload; it has "
            + workloads.stream().map(WorkloadSpec::name).toList());
      }
      List<WorkloadSpec> changed = workloads.stream()
          .map(w -> w.name().equals(workloadName) ? new WorkloadSpec(w.name(), factory, w.loads()) : w).toList();
      return new Scenario(name, description, fleet, changed, window, slo, routers, repeats);
    }

    /** This scenario with every workload's sweep replaced. */
    public Scenario withLoads(List<LoadPattern> loads) {
      List<WorkloadSpec> changed = workloads.stream()
          .map(w -> new WorkloadSpec(w.name(), w.factory(), loads)).toList();
      return new Scenario(name, description, fleet, changed, window, slo, routers, repeats);
    }
  }

  private Benchmark() {}

  /**
   * Runs the scenario on {@code threads} threads (runs are independent; results are the same for any thread
   * count).
   */
  public static BenchmarkResult run(Scenario scenario, Progress progress, int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be positive: " + threads);
    }
    long start = System.nanoTime();
    EngineConfig engine = scenario.fleet().engine().toBuilder().build().config();
    List<Job> jobs = new ArrayList<>();
    for (WorkloadSpec w : scenario.workloads()) {
      for (LoadPattern load : w.loads()) {
        for (String r : scenario.routers()) {
          for (int k = 0; k < scenario.repeats(); k++) {
            jobs.add(new Job(w, load, r, k));
          }
        }
      }
    }
    Runs runs = new Runs(scenario, progress, jobs.size());
    // Each run's result is merged into its point's as soon as it is taken, in job order (so the merge is the same
    // for any thread count), and at most two runs per thread are ahead of the merge: a finished run leaves only its
    // figures, and a benchmark's memory does not grow with its repeats.
    List<RunResult> merged = new ArrayList<>();
    ExecutorService pool = threads == 1 ? null : Executors.newFixedThreadPool(threads);
    try {
      Deque<Future<RunResult>> ahead = new ArrayDeque<>();
      int submitted = 0;
      for (int j = 0; j < jobs.size(); j++) {
        RunResult result;
        if (pool == null) {
          result = runs.run(jobs.get(j));
        } else {
          while (submitted < jobs.size() && ahead.size() < 2 * threads) {
            Job job = jobs.get(submitted++);
            ahead.add(pool.submit(() -> runs.run(job)));
          }
          result = await(Objects.requireNonNull(ahead.poll()));
        }
        if (j % scenario.repeats() == 0) {
          merged.add(result);
        } else {
          merged.get(merged.size() - 1).absorb(result);
        }
      }
    } finally {
      if (pool != null) {
        pool.shutdownNow();
      }
      progress.done();
    }
    return new BenchmarkResult(scenario, engine, merged, System.nanoTime() - start);
  }

  /** One run of the benchmark: a workload at a load point through a router, with the seed of one repeat. */
  private record Job(WorkloadSpec workload, LoadPattern load, String router, int repeat) {}

  /** Makes a scenario's runs, each on fresh servers, and reports their progress; thread-safe. */
  private static final class Runs {
    private final Scenario scenario;
    private final Progress progress;
    private final int count;
    private final AtomicInteger done = new AtomicInteger();
    private final Object progressLock = new Object();

    Runs(Scenario scenario, Progress progress, int count) {
      this.scenario = scenario;
      this.progress = progress;
      this.count = count;
    }

    RunResult run(Job job) {
      String label = job.workload().name() + " " + job.load().label() + " " + job.router()
          + (scenario.repeats() > 1 ? " #" + (job.repeat() + 1) : "");
      long seed = scenario.fleet().seed() + job.repeat();
      VirtualFleet fleet = VirtualFleet.of(scenario.fleet().withSeed(seed));
      Workload workload = job.workload().factory().apply(seed);
      FleetRouter router = Routers.create(job.router(), seed ^ 0x5DEECE66DL, scenario.fleet().scrapeInterval());
      VirtualFleet.Window window = scenario.window();
      double measureSeconds = window.measure().toNanos() / 1e9;
      if (job.load() instanceof LoadPattern.Replay replay
          && workload instanceof dev.kinference.sim.workload.TimedWorkload timed) {
        measureSeconds = Math.max(measureSeconds, timed.durationNanos() / replay.speedup() / 1e9);
      }
      if (job.load() instanceof LoadPattern.Ladder ladder) {
        measureSeconds = ladder.sendTime().toNanos() / 1e9;
      }
      RunResult result = new RunResult(job.router(), job.workload().name(), job.load(), scenario.slo(),
          measureSeconds);
      dev.kinference.sim.fleet.RunObserver observer = new dev.kinference.sim.fleet.RunObserver() {
        @Override
        public void onRequest(dev.kinference.sim.fleet.CompletedRequest request) {
          result.onRequest(request);
        }

        @Override
        public void onTokenGap(dev.kinference.sim.workload.ClientRequest request, long gapNanos) {
          result.onTokenGap(request, gapNanos);
        }

        @Override
        public void onStageStart(int stage, long nanos) {
          result.onStageStart(stage, nanos);
        }

        @Override
        public void onProgress(long simNanos, long totalNanos) {
          synchronized (progressLock) {
            progress.update(done.get(), count, label, (double) simNanos / Math.max(1, totalNanos));
          }
        }
      };
      result.setStats(fleet.run(workload, job.load(), window, router, observer));
      Herding herding = router instanceof ReplicatedRouter replicated ? replicated.herding() : null;
      if (herding != null) {
        result.setHerding(herding.meanShare(), herding.worstShare());
      }
      synchronized (progressLock) {
        progress.update(done.incrementAndGet() - 1, count, label, 1.0);
      }
      return result;
    }
  }

  private static RunResult await(Future<RunResult> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(cause);
    }
  }
}
