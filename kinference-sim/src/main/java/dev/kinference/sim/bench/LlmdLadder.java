package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * llm-d's own table, run as llm-d ran it: {@code --scenario llm-d} under the staged load of its published
 * precise-prefix benchmark ({@link LoadPattern.Ladder#llmdPublished}), one run per scheduler through every stage,
 * summarised as llm-d's report summarises it and set beside its published figures.
 *
 * <p>llm-d's summary row ({@code llm-d/llm-d}, {@code guides/precise-prefix-cache-aware}, inference-perf report of
 * workload profile "X-70R-6kSys"): TTFT p90 over every request of the run pooled (inference-perf's
 * {@code summary_lifecycle_metrics}; its precise 0.542 s and random 92.6 s are not the means of the per-stage p90s,
 * 0.536 s and 77.7 s, while its mean TTFT, 45.3 s for random, is the request-weighted one), and output tokens per
 * second as the mean of the 16 stages' rates after the warm-up (8,730.0 / 6,944.4 / 4,428.7 exactly).
 */
public final class LlmdLadder {

  /** The schedulers of llm-d's table: precise, its published approximate ("estimated") configuration, random. */
  public static final List<String> ROUTERS = List.of("llm-d-precise", LlmdRouter.ESTIMATED, "random");
  /** The longest a stage waits for its requests before the next starts, and the last stage's drain. */
  static final Duration DRAIN_LIMIT = Duration.ofMinutes(15);

  /** llm-d's published figures of one scheduler: pooled TTFT p90, mean output rate, and the 16 stages' values. */
  record Published(String name, double ttftP90, double outputTokensPerSecond, List<Double> stageTtftP90,
      List<Double> stageOutputTokensPerSecond) {}

  static final Published PRECISE = new Published("precise-scheduling", 0.542, 8730.0,
      List.of(0.498, 0.600, 0.400, 0.600, 0.500, 0.583, 0.509, 0.500, 0.488, 0.500, 0.589, 0.600, 0.507,
          0.600, 0.600, 0.500),
      List.of(1219.1, 3902.1, 5761.1, 9184.5, 9382.0, 9242.2, 9221.8, 9780.6, 10270.8, 10054.8, 10128.7,
          10296.5, 10284.6, 10140.9, 10313.9, 10496.9));
  static final Published ESTIMATED = new Published("estimated-scheduling", 31.083, 6944.4,
      List.of(0.497, 0.499, 0.400, 0.600, 0.700, 0.609, 0.708, 2.459, 43.018, 43.515, 44.930, 46.335, 47.284,
          50.108, 49.930, 50.226),
      List.of(1310.9, 3842.4, 5152.9, 8082.6, 8415.7, 8445.1, 8435.9, 7443.5, 8045.9, 7969.6, 7695.2, 7455.9,
          7452.3, 7100.7, 7013.8, 7247.9));
  static final Published RANDOM = new Published("random-scheduling", 92.551, 4428.7,
      List.of(0.820, 1.398, 2.299, 70.273, 78.420, 82.943, 86.182, 91.519, 101.272, 101.142, 101.265, 103.514,
          105.004, 104.321, 106.816, 105.988),
      List.of(1314.0, 3568.5, 3791.1, 4933.1, 4765.4, 4781.3, 4636.3, 4332.6, 4773.8, 4844.6, 4969.5, 4783.2,
          4845.1, 4921.7, 4764.2, 4835.2));
  /** llm-d's precise-over-approximate output rate. */
  static final double PUBLISHED_RATIO = 8730.0 / 6944.4;

  private static final Map<String, Published> BY_ROUTER = Map.of("llm-d-precise", PRECISE, LlmdRouter.ESTIMATED,
      ESTIMATED, "llm-d-approx", ESTIMATED, "random", RANDOM);

  private LlmdLadder() {}

  /**
   * {@code --scenario llm-d} under llm-d's ladder: every request measured (the warm-up too), each stage waiting for
   * its requests at most {@link #DRAIN_LIMIT} when {@code drainBetweenStages}.
   */
  public static Benchmark.Scenario scenario(boolean drainBetweenStages) {
    return Scenarios.llmd().withLoads(List.of(LoadPattern.Ladder.llmdPublished(drainBetweenStages)))
        .withRouters(ROUTERS)
        .withWindow(new VirtualFleet.Window(Duration.ZERO, Duration.ofSeconds(1), DRAIN_LIMIT));
  }

  /**
   * The published figures for {@code router}, or null if llm-d published none for it; a router behind the EPP's
   * shedding ({@code NAME+shed}) is set beside its scheduler's.
   */
  static @Nullable Published published(String router) {
    return BY_ROUTER.get(Routers.withoutShedding(router));
  }

  /**
   * The summary (pooled TTFT p90, mean of the stages' output rates) and the per-stage TTFT p90 and output rate of
   * every router, each beside llm-d's figure and its error.
   */
  public static String table(BenchmarkResult result) {
    StringBuilder b = new StringBuilder();
    b.append("llm-d's table (warm-up + 16 stages; TTFT p90 pooled over every request, output tokens/s the mean of "
        + "the 16 stages' rates):\n");
    b.append(String.format(Locale.ROOT, "%-23s %10s %10s %8s %10s %10s %8s %9s %9s %9s %12s %8s%n", "router",
        "TTFT p90", "llm-d", "error", "output/s", "llm-d", "error", "finished", "rejected", "requests",
        "p90 <=300s", "error"));
    double precise = Double.NaN;
    double approximate = Double.NaN;
    for (RunResult run : result.runs()) {
      LadderStages stages = run.ladderStages();
      double p90 = run.ttftSeconds(90);
      double output = stages.meanOutputTokensPerSecond(1);
      Published pub = published(run.router());
      double withinTimeout = stages.ttftWithinTimeoutSeconds(90);
      b.append(String.format(Locale.ROOT, "%-23s %9.2fs %10s %8s %10.0f %10s %8s %9d %9d %9d %11.2fs %8s%n",
          run.router(), p90,
          pub == null ? "-" : String.format(Locale.ROOT, "%.2fs", pub.ttftP90()),
          pub == null ? "" : error(p90, pub.ttftP90()), output,
          pub == null ? "-" : String.format(Locale.ROOT, "%.0f", pub.outputTokensPerSecond()),
          pub == null ? "" : error(output, pub.outputTokensPerSecond()), run.finished(), run.rejected(),
          run.requests(), withinTimeout, pub == null ? "" : error(withinTimeout, pub.ttftP90())));
      if (Routers.withoutShedding(run.router()).equals("llm-d-precise")) {
        precise = output;
      } else if (Routers.withoutShedding(run.router()).equals(LlmdRouter.ESTIMATED)) {
        approximate = output;
      }
    }
    if (!Double.isNaN(precise) && !Double.isNaN(approximate)) {
      double ratio = precise / approximate;
      b.append(String.format(Locale.ROOT, "precise over estimated output rate: %.2fx (llm-d %.2fx, error %s)%n",
          ratio, PUBLISHED_RATIO, error(ratio, PUBLISHED_RATIO)));
    }
    b.append("(p90 <=300s: the requests that finished within 5 minutes, the others left out, as inference-perf's "
        + "client, with aiohttp's default timeout, counts them as failed; rejected: turned away by the EPP's "
        + "shedding (NAME+shed), in no latency or output figure, as inference-perf leaves failed requests out)\n");
    b.append("\nPer stage: TTFT p90 s / output tokens/s, ours (llm-d's):\n");
    b.append(String.format(Locale.ROOT, "%-10s", "stage"));
    for (RunResult run : result.runs()) {
      b.append(String.format(Locale.ROOT, " %-34s", run.router()));
    }
    b.append('\n');
    LoadPattern.Ladder ladder = result.runs().isEmpty() || !(result.runs().getFirst().load() instanceof
        LoadPattern.Ladder l) ? null : l;
    int count = result.runs().stream().mapToInt(r -> r.ladderStages().count()).max().orElse(0);
    for (int i = 0; i < count; i++) {
      String rate = ladder == null || i >= ladder.stages().size() ? "?" : String.format(Locale.ROOT, "%.0f",
          ladder.stages().get(i).ratePerSecond());
      b.append(String.format(Locale.ROOT, "%-10s", (i == 0 ? "warm " : "") + rate + "/s"));
      for (RunResult run : result.runs()) {
        LadderStages stages = run.ladderStages();
        Published pub = published(run.router());
        String cell = i >= stages.count() ? "-" : String.format(Locale.ROOT, "%.2f / %.0f", stages.ttftSeconds(i, 90),
            stages.outputTokensPerSecond(i));
        if (pub != null && i >= 1 && i - 1 < pub.stageTtftP90().size()) {
          cell += String.format(Locale.ROOT, " (%.2f / %.0f)", pub.stageTtftP90().get(i - 1),
              pub.stageOutputTokensPerSecond().get(i - 1));
        }
        b.append(String.format(Locale.ROOT, " %-34s", cell));
      }
      b.append('\n');
    }
    return b.toString();
  }

  /** {@code (ours - theirs) / theirs} as a signed percentage. */
  static String error(double ours, double theirs) {
    return String.format(Locale.ROOT, "%+.0f%%", 100 * (ours - theirs) / theirs);
  }
}
