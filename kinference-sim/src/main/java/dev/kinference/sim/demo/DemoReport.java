package dev.kinference.sim.demo;

import dev.kinference.sim.bench.Benchmark;
import dev.kinference.sim.bench.BenchmarkResult;
import dev.kinference.sim.bench.Reports;
import dev.kinference.sim.bench.RunResult;
import dev.kinference.sim.bench.Slo;
import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.fleet.EngineSpec;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.SharedPrefixWorkload;
import dev.kinference.sim.workload.Workload;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** The demo's side-by-side table and its report files. Stateless. */
final class DemoReport {

  private DemoReport() {}

  /** One row per measure, one column per router. */
  static String sideBySide(List<RunResult> runs, Slo slo) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%-30s", ""));
    for (RunResult r : runs) {
      sb.append(String.format(Locale.ROOT, "%20s", r.router()));
    }
    sb.append('\n');
    row(sb, runs, "TTFT median (s)", "%20.3f", r -> r.ttftSeconds(50));
    row(sb, runs, "TTFT p95 (s)", "%20.3f", r -> r.ttftSeconds(95));
    row(sb, runs, "throughput (req/min)", "%20.1f", RunResult::throughputPerMinute);
    row(sb, runs, "output tokens/s", "%20.0f", RunResult::outputTokensPerSecond);
    row(sb, runs, "prefix cache hit rate", "%19.1f%%", r -> 100 * r.prefixHitRate());
    row(sb, runs, "goodput (req/min, " + slo.describe() + ")", "%20.1f", RunResult::goodputPerMinute);
    row(sb, runs, "requests measured", "%20.0f", r -> r.requests());
    row(sb, runs, "requests finished", "%20.0f", r -> r.finished());
    sb.append(String.format(Locale.ROOT, "%-30s", "requests per server"));
    for (RunResult r : runs) {
      long[] per = r.requestsPerServer();
      StringBuilder cell = new StringBuilder();
      for (int i = 0; i < per.length; i++) {
        cell.append(i == 0 ? "" : "/").append(per[i]);
      }
      sb.append(String.format(Locale.ROOT, "%20s", cell));
    }
    sb.append('\n');
    if (runs.size() == 2) {
      RunResult ours = runs.get(0);
      RunResult random = runs.get(1);
      sb.append(String.format(Locale.ROOT, "%n%s vs %s: median TTFT %s, goodput %s%n", ours.router(),
          random.router(), change(ours.ttftSeconds(50), random.ttftSeconds(50)),
          ratio(ours.goodputPerMinute(), random.goodputPerMinute())));
    }
    return sb.toString();
  }

  private static String change(double ours, double theirs) {
    if (!(theirs > 0) || Double.isNaN(ours)) {
      return "n/a";
    }
    double pct = 100 * (ours - theirs) / theirs;
    return String.format(Locale.ROOT, "%.0f%% %s", Math.abs(pct), pct <= 0 ? "lower" : "higher");
  }

  private static String ratio(double ours, double theirs) {
    if (theirs <= 0) {
      return ours > 0 ? "better (random met the SLO for no request)" : "n/a (neither met the SLO)";
    }
    return String.format(Locale.ROOT, "%.1fx", ours / theirs);
  }

  private static void row(StringBuilder sb, List<RunResult> runs, String name, String format,
      ToDoubleFunction<RunResult> value) {
    sb.append(String.format(Locale.ROOT, "%-30s", name));
    for (RunResult r : runs) {
      sb.append(String.format(Locale.ROOT, format, value.applyAsDouble(r)));
    }
    sb.append('\n');
  }

  /**
   * Writes the report with the benchmark's report writer ({@code demo.html}, {@code .json}, {@code .csv},
   * {@code .txt}) and returns the HTML file.
   */
  static Path write(Demo.Options o, EngineConfig engine, List<RunResult> runs, double wallSeconds) {
    EngineSpec spec = EngineSpec.of(o.gpu(), o.model(), 1);
    Workload workload = new SharedPrefixWorkload(o.model().name(), o.groups(), o.usersPerGroup(),
        o.systemPromptTokens(), o.questionTokens(), o.outputTokens(), null, o.seed());
    String description = String.format(Locale.ROOT, "kinference demo: %d real-time simulated vLLM servers on "
            + "loopback (HTTP + ZMQ, time x%s), the core Router embedded in the client (%s) versus random routing, "
            + "each on freshly started servers; workload %s, %d closed-loop clients; times are simulated seconds",
        o.servers(), Demo.trim(o.timeScale()), o.view().describe(), workload.describe(), o.concurrency());
    Benchmark.Scenario scenario = new Benchmark.Scenario("demo", description,
        VirtualFleet.Settings.of(o.servers(), spec, o.seed()),
        List.of(new Benchmark.WorkloadSpec(workload.name(), seed -> workload,
            List.of(new LoadPattern.ClosedLoop(o.concurrency())))),
        new VirtualFleet.Window(o.warmup(), o.measure(), o.measure().dividedBy(2)), o.slo(),
        runs.stream().map(RunResult::router).toList());
    BenchmarkResult result = new BenchmarkResult(scenario, engine, runs, (long) (wallSeconds * 1e9));
    return Reports.writeAll(result, o.reportDir(), "demo").html();
  }
}
