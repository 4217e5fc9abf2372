package dev.kinference.cli;

import dev.kinference.sim.bench.Benchmark;
import dev.kinference.sim.bench.BenchmarkPlan;
import dev.kinference.sim.bench.BenchmarkResult;
import dev.kinference.sim.bench.ConsoleProgress;
import dev.kinference.sim.bench.LlmdLadder;
import dev.kinference.sim.bench.Routers;
import dev.kinference.sim.engine.Calibration;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.workload.MultiTurnShape;
import dev.kinference.sim.workload.SharedPrefixShape;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kinference bench}: the routing benchmark on the simulated fleet. The work is in kinference-sim. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
        "Runs the routing benchmark on a simulated vLLM fleet in virtual time: every router of the comparison "
            + "over the scenario's workloads and load sweep. Prints a table, writes JSON, CSV and an HTML report "
            + "with charts, and says where.",
        "",
        "Scenarios: kinference-paper (3x L40S, ~27B FP8; shared-prefix, multi-turn, unique; concurrency 1-64), "
            + "llm-d (llm-d's precise-prefix experiment: 8 servers of 2x H100, Qwen3-32B, Poisson 3-60 QPS), "
            + "smoke (small and fast).",
        ""})
public final class BenchCommand implements Callable<Integer> {

  /** A fleet option left out: the scenario's value. */
  private static final int NOT_GIVEN = Integer.MIN_VALUE;

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before call()
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--scenario", defaultValue = "kinference-paper", paramLabel = "NAME",
      description = "kinference-paper, llm-d or smoke (default: ${DEFAULT-VALUE}).")
  String scenario = "kinference-paper";

  @Option(names = "--trace", paramLabel = "FILE",
      description = "Replay a Mooncake-format JSONL trace (timestamp ms, input_length, output_length, hash_ids of "
          + "512-token blocks) instead of a scenario: Mooncake's FAST'25 conversation_trace.jsonl or "
          + "toolagent_trace.jsonl, or one written by dev.kinference.sim.workload.ToolAgentTrace (the toolagent "
          + "shape), LongConversationTrace or BurstyConversationTrace (the public conversation trace's heavy-tailed "
          + "prompts and whole-second bursts). --speedup sets its speed.")
  @Nullable Path trace;

  @Option(names = "--speedup", defaultValue = "1", paramLabel = "X",
      description = "Trace replay speed: 2 sends the trace's requests at twice their rate (default: "
          + "${DEFAULT-VALUE}).")
  double speedup = 1;

  @Option(names = "--servers", paramLabel = "N",
      description = "Servers in the fleet, up to 4,096 (default: the scenario's; 3 for a trace replay). Size the "
          + "fleet to a trace: one server (an L40S) prefills about 5,600 tokens/s, so a trace needs at least its new "
          + "(uncached) prompt tokens per second over that, plus its decoding; the bench estimates this before "
          + "replaying, and warns (with a --servers to use) when the fleet is too small, since every router then "
          + "saturates.")
  int servers = NOT_GIVEN;

  @Option(names = "--gpu", paramLabel = "NAME",
      description = "Each server's GPU: L40S, A100-80G, H100 or H200 (default: the scenario's).")
  @Nullable String gpu;

  @Option(names = "--model", paramLabel = "NAME",
      description = "The model the servers run: Qwen3-8B, Qwen3-32B, Llama-3.1-8B, Llama-3.1-70B or "
          + "Qwen3.5-27B-FP8, Qwen3.5-27B-FP8-mamba-align (that model as vLLM's Mamba KV-cache groups keep it) or "
          + "gpt-oss-20b (default: the scenario's; requests keep the scenario's model name).")
  @Nullable String model;

  @Option(names = "--tensor-parallel", paramLabel = "N",
      description = "GPUs per server (default: the scenario's).")
  int tensorParallel = NOT_GIVEN;

  @Option(names = "--cpu-offload-gib", paramLabel = "GIB",
      description = "Give each server a KV offload tier of GIB GiB of host memory, as vLLM's offloading connector "
          + "(kv_offloading_size): computed blocks are copied there and a prefix found there is loaded over PCIe "
          + "instead of recomputed (default: none).")
  double cpuOffloadGib;

  @Option(names = "--routers", split = ",", paramLabel = "NAME",
      description = "Routers to compare (default: all): ${COMPLETION-CANDIDATES}.",
      completionCandidates = RouterNames.class)
  List<String> routers = new ArrayList<>();

  @Option(names = "--router-replicas", paramLabel = "N",
      description = "Run each router also as N independent replicas behind a Service (NAME@N: each request to a "
          + "random replica, each with its own view, in-flight counts, index and sessions) next to one instance "
          + "(NAME@1), and print goodput, hit rate and herding side by side; ours also as NAME@Ns, replicas that "
          + "share their in-flight accounts at each scrape. Without --routers: ours (precise and approximate) and "
          + "llm-d's. NAME@N and NAME@Ns also work in --routers.")
  @Nullable Integer routerReplicas;

  @Option(names = "--workloads", split = ",", paramLabel = "NAME",
      description = "Only these workloads of the scenario (shared-prefix, multi-turn, unique, tenant-mix); "
          + "reasoning adds short prompts with 8,000-token answers on average (lognormal); agentic adds coding-agent "
          + "sessions (a shared 3,000-token system prompt, lognormal contexts of 55,000 tokens on average, 2-20 "
          + "turns each appending the answer and a tool's output after 2 s of tool latency, subagents forking their "
          + "parent's context on 10%% of turns; see --agentic). Size the fleet for agentic sessions: each holds its "
          + "~60K-token context in KV memory between turns, and one L40S server holds about two of them (an H100 "
          + "about ten with the default model); the bench prints how many the fleet holds. Contexts end at the "
          + "servers' max_model_len (Qwen3-8B/32B: 40,960, so use Qwen3.5-27B-FP8 or Llama-3.1).")
  List<String> workloads = new ArrayList<>();

  @Option(names = "--tenant-mix", description = "Add the tenant-mix workload (three tenants at once).")
  boolean tenantMix;

  @Option(names = "--concurrency", split = ",", paramLabel = "N",
      description = "Closed-loop concurrency sweep replacing the scenario's, e.g. 1,4,16,64.")
  List<Integer> concurrency = new ArrayList<>();

  @Option(names = "--rate", split = ",", paramLabel = "QPS",
      description = "Open-loop Poisson sweep (sessions per second) replacing the scenario's, e.g. 1,2,5.")
  List<Double> rates = new ArrayList<>();

  @Option(names = "--warmup", defaultValue = "-1", paramLabel = "SECONDS",
      description = "Virtual warm-up per run (default: the scenario's).")
  long warmup = -1;

  @Option(names = "--duration", defaultValue = "0", paramLabel = "SECONDS",
      description = "Virtual measurement window per run (default: the scenario's).")
  long duration;

  @Option(names = "--seed", paramLabel = "N", description = "Seed (default: the scenario's).")
  @Nullable Long seed;

  @Option(names = "--repeat", defaultValue = "1", paramLabel = "N",
      description = "Run each point with N consecutive seeds and merge them (default: ${DEFAULT-VALUE}).")
  int repeat = 1;

  @Option(names = "--threads", defaultValue = "1", paramLabel = "N",
      description = "Runs in parallel (results do not depend on it; default: ${DEFAULT-VALUE}).")
  int threads = 1;

  @Option(names = "--shared-prefix", split = ",", paramLabel = "G,U,S,Q,O",
      description = "The shared-prefix workload's shape replacing the scenario's (the tenant mix's docs-bot too): "
          + "groups, users per group, system prompt, question and output tokens, e.g. 16,6,18000,1000,100 "
          + "(default: the scenario's).")
  List<Integer> sharedPrefix = new ArrayList<>();

  @Option(names = "--multi-turn", split = ",", paramLabel = "A,S,MIN,MAX,M,ANS,T",
      description = "The multi-turn workload's shape replacing the scenario's (the tenant mix's chat too): "
          + "applications, system prompt tokens, fewest and most turns, message and answer tokens, mean think time "
          + "in ms, e.g. 4,2000,4,12,2000,500,5000 (default: the scenario's).")
  List<Integer> multiTurn = new ArrayList<>();

  @Option(names = "--agentic", split = ",", paramLabel = "S,C,MIN,MAX,TOOL,ANS,MS,FORK",
      description = "The agentic workload's shape: system prompt tokens, mean session context tokens (lognormal), "
          + "fewest and most turns, mean tool output and answer tokens, mean tool latency in ms, percent of turns "
          + "that fork a subagent (default: 3000,55000,2,20,1000,300,2000,10). Seeded by --seed.")
  List<Integer> agentic = new ArrayList<>();

  @Option(names = "--scrape-interval", paramLabel = "MS",
      description = "How often the routers' metrics are scraped (default: the scenario's, 50 ms).")
  @Nullable Long scrapeIntervalMs;

  @Option(names = "--metrics-delay", paramLabel = "MS",
      description = "How old a scrape is when a router gets it (default: the scenario's, 5 ms).")
  @Nullable Long metricsDelayMs;

  @Option(names = "--kv-event-delay", paramLabel = "MS",
      description = "How late KV events reach the routers (default: the scenario's, 5 ms).")
  @Nullable Long kvEventDelayMs;

  @Option(names = "--out", defaultValue = "kinference-bench", paramLabel = "DIR",
      description = "Directory for the reports (default: ${DEFAULT-VALUE}).")
  Path out = Path.of("kinference-bench");

  @Option(names = "--no-progress", description = "Do not draw the progress bar.")
  boolean noProgress;

  @Option(names = "--ladder", paramLabel = "MODE",
      description = "With --scenario llm-d: run llm-d's own table as llm-d ran it instead of the rate sweep: one run "
          + "per router through the staged load of its published benchmark (inference-perf stages: a 50 s warm-up "
          + "at 15 QPS, then 3, 10, 15, 20, 22, 25, 30, 35, 40, 43, 46, 49, 52, 55, 57 and 60 QPS for 20-38 s each), "
          + "every request measured, warm-up included; prints TTFT p90 pooled over the run and output tokens/s as "
          + "the mean of the 16 stages' rates, each beside llm-d's published figure and its error, and per stage. "
          + "MODE drain: each stage waits for its requests to finish, then 2 s, as inference-perf runs stages "
          + "(at most 15 minutes); continuous: each stage starts when the previous one's time is up. Default routers: "
          + "llm-d-precise, llm-d-estimated, random; takes --routers, --repeat, --seed, --threads, --no-progress. "
          + "NAME+shed in --routers puts a router behind the admission control of the EPP llm-d's run used "
          + "(v0.5): a request is turned away (HTTP 429, left out of every figure as inference-perf leaves failed "
          + "requests out) while every server has more than 5 waiting or more than 80%% of its KV in use.")
  @Nullable String ladder;

  @Option(names = "--calibration",
      description = "Print the engine model against published vLLM figures instead of running a benchmark.")
  boolean calibration;

  @Override
  public Integer call() {
    PrintStream stdout = new PrintStream(new LineWriterOutputStream(spec.commandLine().getOut()), true,
        StandardCharsets.UTF_8);
    if (calibration) {
      stdout.print(Calibration.table(Calibration.points()));
      return 0;
    }
    if (ladder != null) {
      return runLadder(stdout, ladder);
    }
    try {
      for (String r : routers) {
        if (r.endsWith(Routers.SHEDDING_SUFFIX)) {
          throw new IllegalArgumentException("router '" + r + "': " + Routers.SHEDDING_SUFFIX
              + " (the EPP's shedding) runs with --ladder only");
        }
      }
      BenchmarkPlan.FleetOverride fleet = new BenchmarkPlan.FleetOverride(given("--servers", servers, 4096),
          gpu == null ? null : GpuSpec.named(gpu), model == null ? null : ModelSpec.named(model),
          given("--tensor-parallel", tensorParallel, 64), cpuOffloadGib);
      BenchmarkPlan plan = new BenchmarkPlan(scenario, trace, speedup, fleet, withReplicas(), workloads, concurrency,
          rates, warmup, duration, seed, threads, tenantMix, repeat,
          new BenchmarkPlan.RouterViewOverride(millisOrNull(scrapeIntervalMs), millisOrNull(metricsDelayMs),
              millisOrNull(kvEventDelayMs)),
          sharedPrefix.isEmpty() ? null : SharedPrefixShape.of(sharedPrefix),
          multiTurn.isEmpty() ? null : MultiTurnShape.of(multiTurn), out, agentic);
      plan.run(stdout, !noProgress);
      return 0;
    } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
      spec.commandLine().getErr().println("kinference bench: " + e.getMessage());
      return 2;
    }
  }

  /** {@code --ladder MODE}: llm-d's table under its staged load; other settings of the sweep are refused. */
  private int runLadder(PrintStream stdout, String mode) {
    try {
      if (!mode.equals("drain") && !mode.equals("continuous")) {
        throw new IllegalArgumentException("--ladder takes drain or continuous, not '" + mode + "'");
      }
      if (!scenario.equals("llm-d")) {
        throw new IllegalArgumentException("--ladder runs llm-d's experiment: use it with --scenario llm-d");
      }
      List<String> refused = new ArrayList<>();
      addIf(refused, trace != null, "--trace");
      addIf(refused, !rates.isEmpty(), "--rate");
      addIf(refused, !concurrency.isEmpty(), "--concurrency");
      addIf(refused, warmup >= 0 || duration > 0, "--warmup/--duration");
      addIf(refused, !workloads.isEmpty() || tenantMix || !sharedPrefix.isEmpty() || !multiTurn.isEmpty()
          || !agentic.isEmpty(), "workload options");
      addIf(refused, servers != NOT_GIVEN || gpu != null || model != null || tensorParallel != NOT_GIVEN
          || cpuOffloadGib != 0,
          "fleet options");
      addIf(refused, routerReplicas != null, "--router-replicas");
      addIf(refused, scrapeIntervalMs != null || metricsDelayMs != null || kvEventDelayMs != null, "delays");
      if (!refused.isEmpty()) {
        throw new IllegalArgumentException("--ladder runs llm-d's published setup; it does not take " + refused);
      }
      if (repeat < 1 || repeat > 100) {
        throw new IllegalArgumentException("--repeat must be 1 to 100: " + repeat);
      }
      Benchmark.Scenario s = LlmdLadder.scenario(mode.equals("drain")).withRepeats(repeat);
      if (!routers.isEmpty()) {
        s = s.withRouters(routers);
      }
      if (seed != null) {
        s = s.withFleet(s.fleet().withSeed(seed));
      }
      stdout.println("llm-d's table under its staged load (" + mode + "): " + s.routers() + ", " + repeat
          + " seed(s)");
      BenchmarkResult result = Benchmark.run(s,
          noProgress ? Benchmark.Progress.NONE : new ConsoleProgress(stdout), threads);
      stdout.print(LlmdLadder.table(result));
      return 0;
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("kinference bench: " + e.getMessage());
      return 2;
    }
  }

  /**
   * The value of a fleet option for {@link BenchmarkPlan.FleetOverride}, where 0 means the scenario's: refuses an
   * explicit 0 (or any value out of range) instead of quietly running the scenario's fleet.
   */
  private static int given(String option, int value, int max) {
    if (value == NOT_GIVEN) {
      return 0;
    }
    if (value < 1 || value > max) {
      throw new IllegalArgumentException(option + " must be 1 to " + max + ": " + value);
    }
    return value;
  }

  private static void addIf(List<String> list, boolean condition, String name) {
    if (condition) {
      list.add(name);
    }
  }

  /**
   * The routers to run: with {@code --router-replicas N}, each as {@code NAME@1} and {@code NAME@N}, and ours also
   * as {@code NAME@Ns} (replicas sharing their in-flight accounts).
   */
  private List<String> withReplicas() {
    Integer n = routerReplicas;
    if (n == null) {
      return routers;
    }
    if (n < 2 || n > Routers.MAX_REPLICAS) {
      throw new IllegalArgumentException("--router-replicas must be 2 to " + Routers.MAX_REPLICAS + ": " + n);
    }
    List<String> base = routers.isEmpty()
        ? List.of(Routers.OURS, Routers.OURS_APPROX, "llm-d-precise", "llm-d-approx") : routers;
    List<String> out = new ArrayList<>();
    for (String r : base) {
      out.add(Routers.replicated(r, 1));
      out.add(Routers.replicated(r, n));
      if (Routers.sharesInFlight(r)) {
        out.add(Routers.replicatedSharing(r, n));
      }
    }
    return out;
  }

  private static @Nullable Duration millisOrNull(@Nullable Long millis) {
    return millis == null ? null : Duration.ofMillis(millis);
  }

  /** Router names for the help text. */
  static final class RouterNames extends ArrayList<String> {
    private static final long serialVersionUID = 1L;

    RouterNames() {
      super(Routers.ALL);
      addAll(Routers.EXTRA);
    }
  }
}
