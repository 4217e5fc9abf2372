package dev.kinference.sim.bench;

import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.fleet.EngineSpec;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.AgenticShape;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.MooncakeTrace;
import dev.kinference.sim.workload.MultiTurnShape;
import dev.kinference.sim.workload.MultiTurnWorkload;
import dev.kinference.sim.workload.SharedPrefixShape;
import dev.kinference.sim.workload.SharedPrefixWorkload;
import dev.kinference.sim.workload.TenantMixWorkload;
import dev.kinference.sim.workload.UniquePromptWorkload;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The benchmark's scenarios. */
public final class Scenarios {

  /** The default seed of every scenario. */
  public static final long SEED = 20_250_611L;
  /** The name of Kinference's experiment, the scenario the targets against random are set for. */
  public static final String KINFERENCE_PAPER = "kinference-paper";

  /** Kinference's experiment's shared prefixes: 48 groups x 6 users, 6,000 + 1,000 tokens in, 100 out. */
  public static final SharedPrefixShape KINFERENCE_SHARED_PREFIX = new SharedPrefixShape(48, 6, 6000, 1000, 100);
  /**
   * Kinference's experiment's conversations: 4 applications with 2,000-token system prompts, 4 to 12 turns of
   * 1,000-token messages and 500-token answers, 5 s of thinking between them.
   */
  public static final MultiTurnShape KINFERENCE_MULTI_TURN =
      new MultiTurnShape(4, 2000, 4, 12, 1000, 500, Duration.ofSeconds(5));

  private Scenarios() {}

  /** The scenario names {@link #named} knows. */
  public static List<String> names() {
    return List.of(KINFERENCE_PAPER, "llm-d", "smoke");
  }

  /** A scenario by name. */
  public static Benchmark.Scenario named(String name) {
    return switch (name) {
      case KINFERENCE_PAPER -> kinferencePaper();
      case "llm-d" -> llmd();
      case "smoke" -> smoke();
      default -> throw new IllegalArgumentException("unknown scenario '" + name + "'; known: " + names());
    };
  }

  /**
   * The Kinference experiment's shape: 3 servers, one L40S each, a ~27B model in FP8 (Qwen3.5-27B-like), vLLM
   * defaults; shared-prefix, multi-turn and unique-prompt workloads swept over closed-loop concurrency 1 to 64; SLO
   * TTFT at most 1 s.
   *
   * <p>The shared prefixes (48 groups of 6,000 tokens: 288K tokens) are twice one server's KV cache (136K tokens) and
   * fit in the fleet's (408K): the regime in which the router decides whether prompts hit the cache, as in llm-d's
   * experiment (150 groups of 6,000 tokens over 8 servers of 318K). Conversations carry a growing history (4 to 12
   * turns of 1,000-token messages, such as pasted code or documents, and 500-token answers over a 2,000-token
   * application prompt), so that at high concurrency their histories no longer all fit in the fleet's cache.
   */
  public static Benchmark.Scenario kinferencePaper() {
    EngineSpec engine = EngineSpec.of(GpuSpec.L40S, ModelSpec.QWEN3_5_27B_FP8, 1);
    String model = engine.servedModelName();
    List<LoadPattern> sweep = closedLoop(1, 2, 4, 8, 16, 32, 64);
    return new Benchmark.Scenario(KINFERENCE_PAPER,
        "Kinference's experiment shape: 3 vLLM servers on one L40S each, Qwen3.5-27B (FP8), closed-loop "
            + "concurrency sweep; SLO TTFT <= 1 s",
        VirtualFleet.Settings.of(3, engine, SEED),
        List.of(
            new Benchmark.WorkloadSpec("shared-prefix",
                seed -> KINFERENCE_SHARED_PREFIX.workload(model, null, seed), sweep),
            new Benchmark.WorkloadSpec("multi-turn", seed -> KINFERENCE_MULTI_TURN.workload(model, null, seed),
                sweep),
            new Benchmark.WorkloadSpec("unique", seed -> unique(model, null, seed), sweep)),
        new VirtualFleet.Window(Duration.ofSeconds(60), Duration.ofSeconds(300), Duration.ofSeconds(300)),
        new Slo(Duration.ofSeconds(1), Duration.ZERO), Routers.ALL);
  }

  static UniquePromptWorkload unique(String model, @org.jspecify.annotations.Nullable String tenant, long seed) {
    return new UniquePromptWorkload(model, 2000, 200, tenant, seed);
  }

  /**
   * llm-d's precise-prefix experiment at full scale: 8 servers of 2x H100 (tensor parallel 2), Qwen3-32B, 150 groups x
   * 5 users, 6,000-token shared prefix + 1,200-token question, 1,000 output tokens, Poisson arrivals from 3 to 60
   * requests per second; SLO TTFT at most 2 s. Shortened in time only: 30 s warm-up and 120 s measured per rate.
   */
  public static Benchmark.Scenario llmd() {
    EngineSpec engine = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_32B, 2);
    String model = engine.servedModelName();
    List<LoadPattern> sweep = List.of(new LoadPattern.Poisson(3), new LoadPattern.Poisson(6),
        new LoadPattern.Poisson(10), new LoadPattern.Poisson(15), new LoadPattern.Poisson(30),
        new LoadPattern.Poisson(60));
    return new Benchmark.Scenario("llm-d",
        "llm-d's precise prefix-cache experiment: 8 servers of 2x H100, Qwen3-32B, 150 groups x 5 users, "
            + "6,000 + 1,200 tokens in, 1,000 out, Poisson 3-60 QPS; SLO TTFT <= 2 s",
        VirtualFleet.Settings.of(8, engine, SEED),
        List.of(new Benchmark.WorkloadSpec("shared-prefix",
            seed -> new SharedPrefixWorkload(model, 150, 5, 6000, 1200, 1000, null, seed), sweep)),
        new VirtualFleet.Window(Duration.ofSeconds(30), Duration.ofSeconds(120), Duration.ofSeconds(180)),
        new Slo(Duration.ofSeconds(2), Duration.ZERO), Routers.ALL);
  }

  /** A small, fast scenario for tests and smoke runs: 3 H100 servers with Qwen3-8B and a small KV cache. */
  public static Benchmark.Scenario smoke() {
    EngineSpec engine = EngineSpec.of(GpuSpec.H100, ModelSpec.QWEN3_8B, 1).withNumGpuBlocks(2500);
    String model = engine.servedModelName();
    List<LoadPattern> sweep = closedLoop(4, 16);
    return new Benchmark.Scenario("smoke", "A small fleet for tests: 3x H100, Qwen3-8B, 2,500 KV blocks each",
        VirtualFleet.Settings.of(3, engine, SEED),
        List.of(
            new Benchmark.WorkloadSpec("shared-prefix",
                seed -> new SharedPrefixWorkload(model, 12, 4, 2000, 200, 50, null, seed), sweep),
            new Benchmark.WorkloadSpec("multi-turn",
                seed -> new MultiTurnWorkload(model, 2, 500, 2, 5, 100, 60, Duration.ofSeconds(1), null, seed),
                sweep),
            new Benchmark.WorkloadSpec("unique", seed -> new UniquePromptWorkload(model, 800, 50, null, seed),
                sweep)),
        new VirtualFleet.Window(Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60)),
        new Slo(Duration.ofMillis(300), Duration.ZERO), Routers.ALL);
  }

  /**
   * A tenant mix on the Kinference fleet: shared-prefix (docs-bot, of {@code docsBot}'s shape), multi-turn (chat, of
   * {@code chat}'s) and unique (batch) tenants at once, 2:2:1.
   */
  public static Benchmark.WorkloadSpec tenantMix(String model, List<LoadPattern> sweep, SharedPrefixShape docsBot,
      MultiTurnShape chat) {
    return new Benchmark.WorkloadSpec("tenant-mix", seed -> new TenantMixWorkload(List.of(
        new TenantMixWorkload.Part("docs-bot", 2, docsBot.workload(model, "docs-bot", seed)),
        new TenantMixWorkload.Part("chat", 2, chat.workload(model, "chat", seed + 1)),
        new TenantMixWorkload.Part("batch", 1, unique(model, "batch", seed + 2)))),
        sweep);
  }

  /**
   * The agentic workload ({@link dev.kinference.sim.workload.AgenticWorkload}) of {@code shape} at {@code sweep}: coding-agent sessions with
   * 55K-token contexts that grow turn by turn, and subagents forking their parents' contexts.
   */
  public static Benchmark.WorkloadSpec agentic(String model, AgenticShape shape, List<LoadPattern> sweep) {
    return new Benchmark.WorkloadSpec("agentic", seed -> shape.workload(model, seed), sweep);
  }

  /** Prompts of a replayed trace are cut to this many tokens (the servers' context). */
  static final int TRACE_MAX_INPUT = 32_000;

  /**
   * Replays a Mooncake-format trace on the Kinference fleet (3x L40S, Qwen3.5-27B FP8), prompts cut to the
   * servers' context, at {@code speedup} times the trace's rate.
   */
  public static Benchmark.Scenario trace(Path file, double speedup, int servers) {
    EngineSpec engine = EngineSpec.of(GpuSpec.L40S, ModelSpec.QWEN3_5_27B_FP8, 1);
    String model = engine.servedModelName();
    int maxInput = TRACE_MAX_INPUT;
    MooncakeTrace probe = MooncakeTrace.read(file, model, maxInput);
    return new Benchmark.Scenario("trace", "Replay of " + file.getFileName() + " (" + probe.describe() + ") on "
        + servers + "x L40S, Qwen3.5-27B (FP8), speed x" + speedup + "; SLO TTFT <= 2 s",
        VirtualFleet.Settings.of(servers, engine, SEED),
        List.of(new Benchmark.WorkloadSpec("trace", seed -> MooncakeTrace.read(file, model, maxInput),
            List.of(new LoadPattern.Replay(speedup)))),
        new VirtualFleet.Window(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(600)),
        new Slo(Duration.ofSeconds(2), Duration.ZERO), Routers.ALL);
  }

  static List<LoadPattern> closedLoop(int... concurrencies) {
    return java.util.Arrays.stream(concurrencies).<LoadPattern>mapToObj(LoadPattern.ClosedLoop::new).toList();
  }
}
