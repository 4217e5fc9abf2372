package dev.kinference.sim.bench;

import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.fleet.EngineSpec;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.AgenticShape;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.MooncakeTrace;
import dev.kinference.sim.workload.MultiTurnShape;
import dev.kinference.sim.workload.ReasoningWorkload;
import dev.kinference.sim.workload.SharedPrefixShape;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@code kinference bench} asked for: a named scenario or a trace, with overrides. Turns into a
 * {@link Benchmark.Scenario}, runs it, prints the table and writes the reports. Immutable.
 *
 * @param scenario a name from {@link Scenarios#names()}, ignored when {@code trace} is set
 * @param trace a Mooncake JSONL trace to replay, or null
 * @param traceSpeedup replay speed for a trace
 * @param fleet the servers, where they differ from the scenario's (or the trace replay's 3x L40S)
 * @param routers routers to compare, or empty for all
 * @param workloads workloads to run, or empty for all of the scenario's
 * @param concurrency closed-loop sweep replacing the scenario's, or empty
 * @param rates Poisson sweep (requests or sessions per second) replacing the scenario's, or empty
 * @param warmupSeconds warm-up override, or negative
 * @param measureSeconds measurement window override, or non-positive
 * @param seed seed override, or null
 * @param threads runs in parallel
 * @param withTenantMix add the tenant-mix workload (Kinference fleet only)
 * @param repeats runs of each point with consecutive seeds, merged
 * @param routerView how stale the routers' view of the servers is, where it differs from the scenario's
 * @param sharedPrefix the shared-prefix workload's shape (the tenant mix's docs-bot tenant's too) replacing the
 *     scenario's, or null
 * @param multiTurn the multi-turn workload's shape (the tenant mix's chat tenant's too) replacing the scenario's, or
 *     null
 * @param outputDir where reports go
 * @param agentic the agentic workload's shape as {@link AgenticShape#of} reads it (eight numbers), or empty for
 *     {@link AgenticShape#codingAgent}; sessions are cut at the fleet's max_model_len either way
 */
public record BenchmarkPlan(String scenario, @Nullable Path trace, double traceSpeedup, FleetOverride fleet,
    List<String> routers, List<String> workloads, List<Integer> concurrency, List<Double> rates, long warmupSeconds,
    long measureSeconds, @Nullable Long seed, int threads, boolean withTenantMix, int repeats,
    RouterViewOverride routerView, @Nullable SharedPrefixShape sharedPrefix, @Nullable MultiTurnShape multiTurn,
    Path outputDir, List<Integer> agentic) {

  /** A plan with the default agentic shape. */
  public BenchmarkPlan(String scenario, @Nullable Path trace, double traceSpeedup, FleetOverride fleet,
      List<String> routers, List<String> workloads, List<Integer> concurrency, List<Double> rates,
      long warmupSeconds, long measureSeconds, @Nullable Long seed, int threads, boolean withTenantMix, int repeats,
      RouterViewOverride routerView, @Nullable SharedPrefixShape sharedPrefix, @Nullable MultiTurnShape multiTurn,
      Path outputDir) {
    this(scenario, trace, traceSpeedup, fleet, routers, workloads, concurrency, rates, warmupSeconds, measureSeconds,
        seed, threads, withTenantMix, repeats, routerView, sharedPrefix, multiTurn, outputDir, List.of());
  }

  /**
   * What the routers see of the servers, where it differs from the scenario's {@link VirtualFleet.Settings}: how
   * often metrics are scraped, how old a scrape is when it arrives, and how late KV events arrive. Null keeps the
   * scenario's.
   */
  public record RouterViewOverride(@Nullable Duration scrapeInterval, @Nullable Duration metricsDelay,
      @Nullable Duration kvEventDelay) {

    /** The scenario's view, unchanged. */
    public static final RouterViewOverride NONE = new RouterViewOverride(null, null, null);

    /** Refuses what the command line could pass but a fleet cannot take, naming it in milliseconds. */
    public RouterViewOverride {
      if (scrapeInterval != null && !scrapeInterval.isPositive()) {
        throw new IllegalArgumentException("the scrape interval must be positive: " + scrapeInterval.toMillis()
            + " ms");
      }
      if (metricsDelay != null && metricsDelay.isNegative()) {
        throw new IllegalArgumentException("the metrics delay must not be negative: " + metricsDelay.toMillis()
            + " ms");
      }
      if (kvEventDelay != null && kvEventDelay.isNegative()) {
        throw new IllegalArgumentException("the KV-event delay must not be negative: " + kvEventDelay.toMillis()
            + " ms");
      }
    }

    /** {@code fleet} with the settings this overrides; {@code fleet} itself for {@link #NONE}. */
    VirtualFleet.Settings applyTo(VirtualFleet.Settings fleet) {
      VirtualFleet.Settings f = fleet;
      if (scrapeInterval != null || metricsDelay != null) {
        f = f.withScrape(scrapeInterval != null ? scrapeInterval : f.scrapeInterval(),
            metricsDelay != null ? metricsDelay : f.metricsDelay());
      }
      return kvEventDelay != null ? f.withKvEventDelay(kvEventDelay) : f;
    }
  }

  /**
   * The servers, where they differ from the scenario's: how many, and each one's GPU, model and tensor parallelism
   * (0 or null keeps the scenario's). The served model name stays the scenario's, so its workloads still address
   * the fleet. The scenario's explicit engine settings (a smaller KV cache, a step budget) carry over.
   */
  public record FleetOverride(int servers, @Nullable GpuSpec gpu, @Nullable ModelSpec model, int tensorParallel,
      double cpuOffloadGib) {

    /** The scenario's servers, unchanged. */
    public static final FleetOverride NONE = new FleetOverride(0, null, null, 0);

    /** Without an offload tier (the scenario's). */
    public FleetOverride(int servers, @Nullable GpuSpec gpu, @Nullable ModelSpec model, int tensorParallel) {
      this(servers, gpu, model, tensorParallel, 0);
    }

    /** Refuses what a fleet cannot take, naming the option. */
    public FleetOverride {
      if (!(cpuOffloadGib >= 0) || cpuOffloadGib > 1 << 20) {
        throw new IllegalArgumentException("--cpu-offload-gib must be in [0, 1048576]: " + cpuOffloadGib);
      }
      if (servers < 0 || servers > 4096) {
        throw new IllegalArgumentException("servers must be in [1, 4096]: " + servers);
      }
      if (tensorParallel < 0 || tensorParallel > 64) {
        throw new IllegalArgumentException("tensor parallelism must be in [1, 64]: " + tensorParallel);
      }
    }

    /** Just {@code servers} servers of the scenario's kind. */
    public static FleetOverride servers(int servers) {
      return new FleetOverride(servers, null, null, 0);
    }

    /** These settings with {@code n} servers (0: the scenario's). */
    public FleetOverride withServers(int n) {
      return new FleetOverride(n, gpu, model, tensorParallel, cpuOffloadGib);
    }

    boolean isNone() {
      return servers == 0 && gpu == null && model == null && tensorParallel == 0 && cpuOffloadGib == 0;
    }

    /** {@code s} with these servers, its description saying so. */
    Benchmark.Scenario applyTo(Benchmark.Scenario s) {
      if (isNone()) {
        return s;
      }
      VirtualFleet.Settings f = s.fleet();
      EngineSpec e = f.engine();
      EngineSpec engine = new EngineSpec(gpu != null ? gpu : e.gpu(), model != null ? model : e.model(),
          tensorParallel > 0 ? tensorParallel : e.tensorParallel(), e.servedModelName(), e.maxNumBatchedTokens(),
          e.maxNumSeqs(), e.numGpuBlocks(), e.maxModelLen(),
          cpuOffloadGib > 0 ? (long) (cpuOffloadGib * (1L << 30)) : e.cpuOffloadBytes());
      VirtualFleet.Settings fleet = new VirtualFleet.Settings(servers > 0 ? servers : f.servers(), engine,
          f.scrapeInterval(), f.metricsDelay(), f.kvEventDelay(), f.dispatchLatency(), f.seed());
      String description = s.description() + "; servers overridden: " + fleet.servers() + "x ("
          + engine.describe() + ")";
      return new Benchmark.Scenario(s.name(), description, fleet, s.workloads(), s.window(), s.slo(), s.routers(),
          s.repeats());
    }
  }
  /** The reasoning workload's name, which {@code workloads} may name to add it to any scenario. */
  public static final String REASONING = "reasoning";
  /** The agentic workload's name, which {@code workloads} may name to add it to any scenario. */
  public static final String AGENTIC = "agentic";

  private static final int REASONING_PROMPT = 200;
  private static final int REASONING_MEAN_OUTPUT = 8_000;

  public BenchmarkPlan {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(fleet, "fleet");
    Objects.requireNonNull(routerView, "routerView");
    Objects.requireNonNull(outputDir, "outputDir");
    routers = List.copyOf(routers);
    workloads = List.copyOf(workloads);
    concurrency = List.copyOf(concurrency);
    rates = List.copyOf(rates);
    agentic = List.copyOf(agentic);
    if (!agentic.isEmpty()) {
      AgenticShape.of(agentic, Integer.MAX_VALUE); // refuse a bad shape before anything runs
    }
    if (trace != null && workloads.contains(AGENTIC)) {
      throw new IllegalArgumentException("a trace replay runs the trace only; the agentic workload runs on a "
          + "scenario (leave out --trace)");
    }
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be positive: " + threads);
    }
    if (!concurrency.isEmpty() && !rates.isEmpty()) {
      throw new IllegalArgumentException("give a concurrency sweep or a rate sweep, not both");
    }
  }

  /** The scenario with every override applied. */
  public Benchmark.Scenario toScenario() {
    Benchmark.Scenario s = trace != null
        ? fleet.withServers(0).applyTo(Scenarios.trace(trace, traceSpeedup, fleet.servers() > 0 ? fleet.servers() : 3))
        : fleet.applyTo(Scenarios.named(scenario));
    String model = s.fleet().engine().servedModelName();
    if (sharedPrefix != null) {
      SharedPrefixShape shape = sharedPrefix;
      s = s.withWorkloadFactory("shared-prefix", seed -> shape.workload(model, null, seed));
    }
    if (multiTurn != null) {
      MultiTurnShape shape = multiTurn;
      s = s.withWorkloadFactory("multi-turn", seed -> shape.workload(model, null, seed));
    }
    if (withTenantMix) {
      List<Benchmark.WorkloadSpec> more = new ArrayList<>(s.workloads());
      more.add(Scenarios.tenantMix(model, s.workloads().get(0).loads(),
          sharedPrefix != null ? sharedPrefix : Scenarios.KINFERENCE_SHARED_PREFIX,
          multiTurn != null ? multiTurn : Scenarios.KINFERENCE_MULTI_TURN));
      s = new Benchmark.Scenario(s.name(), s.description(), s.fleet(), more, s.window(), s.slo(), s.routers(),
          s.repeats());
    }
    if (workloads.contains(REASONING) && s.workloads().stream().noneMatch(w -> w.name().equals(REASONING))) {
      // not part of any scenario's default sweep: run when asked for by name, at the scenario's first sweep
      List<Benchmark.WorkloadSpec> more = new ArrayList<>(s.workloads());
      int longest = s.fleet().engine().toBuilder().build().config().maxModelLen();
      int cap = Math.max(REASONING_MEAN_OUTPUT, Math.min(4 * REASONING_MEAN_OUTPUT, longest - 2 * REASONING_PROMPT));
      more.add(new Benchmark.WorkloadSpec(REASONING,
          seed -> new ReasoningWorkload(model, REASONING_PROMPT, REASONING_MEAN_OUTPUT, cap, seed),
          s.workloads().get(0).loads()));
      s = new Benchmark.Scenario(s.name(), s.description(), s.fleet(), more, s.window(), s.slo(), s.routers(),
          s.repeats());
    }
    if (workloads.contains(AGENTIC) && s.workloads().stream().noneMatch(w -> w.name().equals(AGENTIC))) {
      // like reasoning: run when asked for by name, at the scenario's first sweep, cut at the servers' context
      List<Benchmark.WorkloadSpec> more = new ArrayList<>(s.workloads());
      more.add(Scenarios.agentic(model, agenticShape(s), s.workloads().get(0).loads()));
      s = new Benchmark.Scenario(s.name(), s.description(), s.fleet(), more, s.window(), s.slo(), s.routers(),
          s.repeats());
    }
    if (!workloads.isEmpty()) {
      s = s.withWorkloads(workloads);
    }
    if (!concurrency.isEmpty()) {
      s = s.withLoads(concurrency.stream().<LoadPattern>map(LoadPattern.ClosedLoop::new).toList());
    }
    if (!rates.isEmpty()) {
      s = s.withLoads(rates.stream().<LoadPattern>map(LoadPattern.Poisson::new).toList());
    }
    if (!routers.isEmpty()) {
      s = s.withRouters(routers);
    }
    if (warmupSeconds >= 0 || measureSeconds > 0) {
      VirtualFleet.Window w = s.window();
      s = s.withWindow(new VirtualFleet.Window(warmupSeconds >= 0 ? Duration.ofSeconds(warmupSeconds) : w.warmup(),
          measureSeconds > 0 ? Duration.ofSeconds(measureSeconds) : w.measure(), w.drainLimit()));
    }
    if (seed != null) {
      s = s.withFleet(s.fleet().withSeed(seed));
    }
    s = s.withFleet(routerView.applyTo(s.fleet()));
    return s.withRepeats(repeats);
  }

  /** The agentic shape for the scenario's fleet: sessions end before the servers' max_model_len. */
  AgenticShape agenticShape(Benchmark.Scenario s) {
    int longest = s.fleet().engine().toBuilder().build().config().maxModelLen();
    return agentic.isEmpty() ? AgenticShape.codingAgent(longest) : AgenticShape.of(agentic, longest);
  }

  /** For a trace replay, the warning of {@link FleetSizing} for the scenario's fleet; empty otherwise. */
  String traceSizingWarning(Benchmark.Scenario s) {
    if (trace == null) {
      return "";
    }
    MooncakeTrace workload = MooncakeTrace.read(trace, s.fleet().engine().servedModelName(), Scenarios.TRACE_MAX_INPUT);
    SimEngine engine = s.fleet().engine().toBuilder().build();
    return FleetSizing.of(workload, engine, traceSpeedup).warningFor(s.fleet().servers());
  }

  /**
   * Runs the plan: prints the table to {@code out}, writes JSON, CSV, HTML and text into {@link #outputDir}, and
   * says where.
   */
  public Reports.Written run(PrintStream out, boolean progress) {
    Benchmark.Scenario s = toScenario();
    int runs = s.workloads().stream().mapToInt(w -> w.loads().size()).sum() * s.routers().size() * s.repeats();
    out.printf("kinference bench: %s, %d runs (%d routers)%n", s.description(), runs, s.routers().size());
    String sizing = traceSizingWarning(s);
    if (!sizing.isEmpty()) {
      out.println(sizing);
    }
    if (s.workloads().stream().anyMatch(w -> w.name().equals(AGENTIC))) {
      out.println(FleetSizing.agenticNote(agenticShape(s), s.fleet()));
    }
    BenchmarkResult result = Benchmark.run(s, progress ? new ConsoleProgress(out) : Benchmark.Progress.NONE,
        threads);
    out.println(Reports.table(result));
    String replicas = ReplicaReport.table(result);
    if (!replicas.isEmpty()) {
      out.println(replicas);
    }
    if (!sizing.isEmpty()) {
      out.println(sizing);
    }
    Reports.Written written = Reports.writeAll(result, outputDir, s.name());
    out.println("Report:  " + written.html().toAbsolutePath());
    out.println("Data:    " + written.json().toAbsolutePath() + ", " + written.csv().toAbsolutePath());
    return written;
  }
}
