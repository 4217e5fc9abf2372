package dev.kinference.sim.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.sim.engine.EngineConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a {@link BenchmarkResult} as a printed table, JSON, CSV and a self-contained HTML report
 * ({@link HtmlReport}).
 */
public final class Reports {

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private static final double[] CDF_PERCENTILES = {0, 1, 2, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70,
      75, 80, 85, 90, 92.5, 95, 97.5, 99, 99.5, 99.9, 100};

  private Reports() {}

  /** The files written by {@link #writeAll}. */
  public record Written(Path json, Path csv, Path html, Path table) {}

  /** Writes {@code <name>.json}, {@code .csv}, {@code .html} and {@code .txt} into {@code dir} (created if needed). */
  public static Written writeAll(BenchmarkResult result, Path dir, String name) {
    try {
      Files.createDirectories(dir);
      Path json = dir.resolve(name + ".json");
      Path csv = dir.resolve(name + ".csv");
      Path html = dir.resolve(name + ".html");
      Path txt = dir.resolve(name + ".txt");
      Files.writeString(json, json(result), StandardCharsets.UTF_8);
      Files.writeString(csv, csv(result), StandardCharsets.UTF_8);
      Files.writeString(html, html(result), StandardCharsets.UTF_8);
      Files.writeString(txt, table(result), StandardCharsets.UTF_8);
      return new Written(json, csv, html, txt);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the report into " + dir + ": " + e.getMessage(), e);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Table

  /** The printed summary: setup, one table per workload, and the targets. */
  public static String table(BenchmarkResult result) {
    StringBuilder sb = new StringBuilder();
    Benchmark.Scenario s = result.scenario();
    EngineConfig e = result.engine();
    sb.append("Scenario ").append(s.name()).append(": ").append(s.description()).append('\n');
    sb.append(String.format(Locale.ROOT, "Servers: %d x (%s), %d KV blocks of %d tokens (%,d tokens), "
            + "max_num_batched_tokens %d, max_num_seqs %d; SLO %s; seed %d%n", s.fleet().servers(),
        s.fleet().engine().describe(), e.numGpuBlocks(), e.blockSize(), e.kvCapacityTokens(), e.maxNumBatchedTokens(),
        e.maxNumSeqs(), s.slo().describe(), s.fleet().seed()));
    boolean replay = !result.runs().isEmpty()
        && result.runs().stream().allMatch(r -> r.load() instanceof dev.kinference.sim.workload.LoadPattern.Replay);
    String window = replay
        ? String.format(Locale.ROOT, "the whole trace measured (%.0f s)",
            result.runs().get(0).measureSeconds() / result.runs().get(0).repeats())
        : String.format(Locale.ROOT, "%d s warm-up, %d s measured", s.window().warmup().toSeconds(),
            s.window().measure().toSeconds());
    sb.append(String.format(Locale.ROOT, "Router sees metrics every %d ms (%d ms old), KV events after %d ms; "
            + "window: %s; %d seed(s) per point%n", s.fleet().scrapeInterval().toMillis(),
        s.fleet().metricsDelay().toMillis(), s.fleet().kvEventDelay().toMillis(), window, s.repeats()));
    for (String w : result.workloads()) {
      sb.append('\n').append("== ").append(w).append(" ==\n");
      sb.append(s.describeWorkload(w)).append('\n');
      List<RunResult> any = result.sweep(w, result.routers().get(0));
      sb.append(String.format(Locale.ROOT, "%-20s", "TTFT p50 (s)"));
      for (RunResult r : any) {
        sb.append(String.format(Locale.ROOT, "%9s", r.load().label()));
      }
      sb.append(String.format(Locale.ROOT, " | %8s %8s %8s %8s %9s %7s %6s %7s%n", "p50 all", "p95 all", "p99 all",
          "ITL p50", "peak gpt", "hit", "spread", "done"));
      for (String router : result.routers()) {
        List<RunResult> sweep = result.sweep(w, router);
        sb.append(String.format(Locale.ROOT, "%-20s", router));
        for (RunResult r : sweep) {
          sb.append(String.format(Locale.ROOT, "%9.3f", r.ttftSeconds(50)));
        }
        double itl = sweep.stream().mapToDouble(r -> r.itlSeconds(50)).filter(d -> !Double.isNaN(d)).average()
            .orElse(Double.NaN);
        double spread = sweep.stream().mapToDouble(RunResult::loadSpread).max().orElse(1);
        long requests = result.pooledRequests(w, router);
        sb.append(String.format(Locale.ROOT, " | %8.3f %8.3f %8.3f %8.3f %9.1f %6.1f%% %6.2f %6.1f%%%n",
            result.pooledTtftSeconds(w, router, 50), result.pooledTtftSeconds(w, router, 95),
            result.pooledTtftSeconds(w, router, 99), itl, result.peakGoodput(w, router),
            100 * result.pooledHitRate(w, router), spread,
            requests == 0 ? 0 : 100.0 * result.pooledFinished(w, router) / requests));
      }
      sb.append(String.format(Locale.ROOT, "%-20s", "goodput (req/min)"));
      sb.append('\n');
      sb.append("(TTFT counts every measured request; one without a first token by the run's end counts the time it"
          + " waited. done = finished / measured)\n");
      for (String router : result.routers()) {
        sb.append(String.format(Locale.ROOT, "%-20s", router));
        for (RunResult r : result.sweep(w, router)) {
          sb.append(String.format(Locale.ROOT, "%9.1f", r.goodputPerMinute()));
        }
        sb.append('\n');
      }
    }
    List<Targets.Check> checks = Targets.evaluate(result);
    if (!checks.isEmpty()) {
      sb.append("\nTargets for ").append(Routers.OURS).append(":\n");
      for (Targets.Check c : checks) {
        sb.append(c.met() ? "  met    " : "  MISSED ").append(c.name()).append(": ").append(c.measured())
            .append(" (target ").append(c.target()).append(")\n");
      }
    }
    int repeats = result.scenario().repeats();
    sb.append(repeats > 1
        ? String.format(Locale.ROOT, "%n%d points of %d seeds (%d runs) in %.1f s wall time%n", result.runs().size(),
            repeats, result.runs().size() * repeats, result.wallNanos() / 1e9)
        : String.format(Locale.ROOT, "%n%d runs in %.1f s wall time%n", result.runs().size(),
            result.wallNanos() / 1e9));
    return sb.toString();
  }

  // -------------------------------------------------------------------------------------------------------------
  // CSV

  /** One row per run. */
  public static String csv(BenchmarkResult result) {
    StringBuilder sb = new StringBuilder("workload,router,load,x,requests,started,finished,met_slo,ttft_p50_s,ttft_p90_s,"
        + "ttft_p95_s,ttft_p99_s,itl_p50_s,itl_p99_s,e2e_p50_s,e2e_p99_s,goodput_per_min,throughput_per_min,"
        + "output_tokens_per_s,prefix_hit_rate,load_spread,preemptions,requests_per_server,simulated_s,wall_s\n");
    for (RunResult r : result.runs()) {
      long[] per = r.requestsPerServer();
      StringBuilder servers = new StringBuilder();
      for (int i = 0; i < per.length; i++) {
        servers.append(i == 0 ? "" : " ").append(per[i]);
      }
      sb.append(String.format(Locale.ROOT,
          "%s,%s,%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f,%.2f,%.2f,%.1f,%.4f,%.3f,%d,%s,%.1f,%.2f%n",
          r.workload(), r.router(), r.load().label(), r.load().x(), r.requests(), r.started(), r.finished(), r.metSlo(),
          r.ttftSeconds(50), r.ttftSeconds(90), r.ttftSeconds(95), r.ttftSeconds(99), r.itlSeconds(50),
          r.itlSeconds(99), r.e2eSeconds(50), r.e2eSeconds(99), r.goodputPerMinute(), r.throughputPerMinute(),
          r.outputTokensPerSecond(), r.prefixHitRate(), r.loadSpread(), r.preemptions(), servers,
          r.stats().simulatedNanos() / 1e9, r.stats().wallNanos() / 1e9));
    }
    return sb.toString();
  }

  // -------------------------------------------------------------------------------------------------------------
  // JSON

  /** Everything: setup, every run with its percentiles, the pooled figures and the targets. */
  public static String json(BenchmarkResult result) {
    try {
      return JSON.writeValueAsString(jsonTree(result));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ObjectNode jsonTree(BenchmarkResult result) {
    ObjectNode root = JSON.createObjectNode();
    Benchmark.Scenario s = result.scenario();
    EngineConfig e = result.engine();
    root.put("scenario", s.name());
    root.put("description", s.description());
    root.put("seed", s.fleet().seed());
    root.put("repeats", s.repeats());
    ObjectNode fleet = root.putObject("fleet");
    fleet.put("servers", s.fleet().servers());
    fleet.put("gpu", e.gpu().name());
    fleet.put("model", e.model().name());
    fleet.put("tensorParallel", e.tensorParallel());
    fleet.put("numGpuBlocks", e.numGpuBlocks());
    fleet.put("blockSize", e.blockSize());
    fleet.put("kvCapacityTokens", e.kvCapacityTokens());
    fleet.put("maxNumBatchedTokens", e.maxNumBatchedTokens());
    fleet.put("maxNumSeqs", e.maxNumSeqs());
    fleet.put("scrapeIntervalMs", s.fleet().scrapeInterval().toMillis());
    fleet.put("metricsDelayMs", s.fleet().metricsDelay().toMillis());
    fleet.put("kvEventDelayMs", s.fleet().kvEventDelay().toMillis());
    fleet.put("dispatchLatencyMs", s.fleet().dispatchLatency().toMillis());
    ObjectNode window = root.putObject("window");
    window.put("warmupSeconds", s.window().warmup().toSeconds());
    window.put("measureSeconds", s.window().measure().toSeconds());
    root.put("slo", s.slo().describe());
    List<String> names = result.routers();
    root.put("ours", names.contains(Routers.OURS) || names.isEmpty() ? Routers.OURS : names.get(0));
    ObjectNode routers = root.putObject("routers");
    for (String r : result.routers()) {
      routers.put(r, Routers.describe(r));
    }
    ArrayNode workloads = root.putArray("workloads");
    for (String w : result.workloads()) {
      ObjectNode wn = workloads.addObject();
      wn.put("name", w);
      wn.put("description", s.describeWorkload(w));
      ObjectNode pooled = wn.putObject("pooled");
      for (String r : result.routers()) {
        ObjectNode p = pooled.putObject(r);
        p.put("requests", result.pooledRequests(w, r));
        p.put("finished", result.pooledFinished(w, r));
        p.put("ttftP50", result.pooledTtftSeconds(w, r, 50));
        p.put("ttftP90", result.pooledTtftSeconds(w, r, 90));
        p.put("ttftP95", result.pooledTtftSeconds(w, r, 95));
        p.put("ttftP99", result.pooledTtftSeconds(w, r, 99));
        p.put("peakGoodputPerMin", result.peakGoodput(w, r));
        p.put("prefixHitRate", result.pooledHitRate(w, r));
        p.put("maxLoadMeetingSlo", result.maxLoadMeetingSlo(w, r));
      }
    }
    ArrayNode runs = root.putArray("runs");
    for (RunResult r : result.runs()) {
      ObjectNode n = runs.addObject();
      n.put("workload", r.workload());
      n.put("router", r.router());
      n.put("load", r.load().label());
      n.put("x", r.load().x());
      n.put("repeats", r.repeats());
      n.put("requests", r.requests());
      n.put("started", r.started());
      n.put("finished", r.finished());
      n.put("metSlo", r.metSlo());
      ObjectNode ttft = n.putObject("ttftSeconds");
      ObjectNode itl = n.putObject("itlSeconds");
      ObjectNode e2e = n.putObject("e2eSeconds");
      for (double p : new double[] {50, 90, 95, 99, 99.9}) {
        String key = "p" + (p == Math.rint(p) ? String.valueOf((int) p) : String.valueOf(p));
        ttft.put(key, r.ttftSeconds(p));
        itl.put(key, r.itlSeconds(p));
        e2e.put(key, r.e2eSeconds(p));
      }
      ttft.put("mean", r.ttftMicros().getMean() / 1e6);
      n.put("goodputPerMin", r.goodputPerMinute());
      n.put("throughputPerMin", r.throughputPerMinute());
      n.put("outputTokensPerSecond", r.outputTokensPerSecond());
      n.put("prefixHitRate", r.prefixHitRate());
      n.put("loadSpread", r.loadSpread());
      n.put("preemptions", r.preemptions());
      ArrayNode per = n.putArray("requestsPerServer");
      for (long c : r.requestsPerServer()) {
        per.add(c);
      }
      if (result.sweep(r.workload(), r.router()).size() == 1) {
        // one load point (the demo): the charts show its distribution and timeline instead of a sweep
        ArrayNode cdf = n.putArray("ttftCdf");
        for (double p : CDF_PERCENTILES) {
          cdf.addArray().add(p).add(r.ttftSeconds(p));
        }
        ArrayNode finishedPerSecond = n.putArray("finishedPerSecond");
        for (long c : r.finishedPerSecond()) {
          finishedPerSecond.add(c);
        }
      }
      n.put("simulatedSeconds", r.stats().simulatedNanos() / 1e9);
      n.put("wallSeconds", r.stats().wallNanos() / 1e9);
    }
    ArrayNode targets = root.putArray("targets");
    for (Targets.Check c : Targets.evaluate(result)) {
      ObjectNode t = targets.addObject();
      t.put("name", c.name());
      t.put("measured", c.measured());
      t.put("target", c.target());
      t.put("met", c.met());
    }
    root.put("wallSeconds", result.wallNanos() / 1e9);
    return root;
  }

  // -------------------------------------------------------------------------------------------------------------
  // HTML

  /** A self-contained HTML page: setup, targets, and per workload the charts and the summary table. */
  public static String html(BenchmarkResult result) {
    return HtmlReport.render(result);
  }

  static String escape(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }
}
