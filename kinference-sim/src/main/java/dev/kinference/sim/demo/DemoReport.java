package dev.kinference.sim.demo;

import dev.kinference.sim.bench.RunResult;
import dev.kinference.sim.bench.Slo;
import dev.kinference.sim.engine.EngineConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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

  /** Writes the report and returns the HTML file. */
  static Path write(Demo.Options o, EngineConfig engine, List<RunResult> runs, double wallSeconds)
      throws IOException {
    Files.createDirectories(o.reportDir());
    Path html = o.reportDir().resolve("demo.html");
    String table = sideBySide(runs, o.slo());
    Files.writeString(html, "<!doctype html><meta charset=utf-8><title>kinference demo</title><pre>"
        + table.replace("&", "&amp;").replace("<", "&lt;") + "</pre>", StandardCharsets.UTF_8);
    Files.writeString(o.reportDir().resolve("demo.txt"), table, StandardCharsets.UTF_8);
    return html;
  }
}
