package dev.kinference.sim.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.sim.engine.EngineConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a {@link BenchmarkResult} as a printed table, JSON, CSV and a self-contained HTML report.
 *
 * <p>The HTML report draws its charts with Apache ECharts, whose minified script is read from the
 * {@code org.webjars.npm:echarts} jar at report time and inlined: the report is one file that opens offline, with
 * interactive charts (tooltips, toggling routers in the legend, log axes), and the build ships no JavaScript of its
 * own beyond the few lines that feed the data to the charts.
 */
public final class Reports {

  static final String ECHARTS_RESOURCE = "META-INF/resources/webjars/echarts/5.3.1/dist/echarts.min.js";

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

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
    String data;
    try {
      data = new ObjectMapper().writeValueAsString(jsonTree(result));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String table = escape(table(result));
    return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <title>Kinference benchmark: %s</title>
        <style>
        body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
        h1{font-size:22px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
        .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(620px,1fr));gap:16px}
        .chart{height:380px;border:1px solid #eee;border-radius:6px}
        pre{background:#f7f7f7;padding:12px;overflow-x:auto;font-size:12px}
        .met{color:#1a7f37} .missed{color:#cf222e;font-weight:600}
        table{border-collapse:collapse;font-size:13px} td,th{padding:3px 8px;border-bottom:1px solid #eee}
        </style>
        <script>%s</script>
        </head><body>
        <h1>Kinference routing benchmark: %s</h1>
        <p id="desc"></p>
        <h2>Targets</h2><ul id="targets"></ul>
        <div id="workloads"></div>
        <h2>Routers</h2><table id="routers"></table>
        <h2>Summary</h2><pre>%s</pre>
        <script>
        const data = %s;
        document.getElementById('desc').textContent = data.description + ' (' + data.fleet.servers + ' x ' +
            data.fleet.tensorParallel + ' ' + data.fleet.gpu + ', ' + data.fleet.model + ', ' +
            data.fleet.numGpuBlocks + ' KV blocks; SLO ' + data.slo + '; seed ' + data.seed + ')';
        const tl = document.getElementById('targets');
        if (data.targets.length === 0) { tl.innerHTML = '<li>no targets apply</li>'; }
        for (const t of data.targets) {
          const li = document.createElement('li');
          li.className = t.met ? 'met' : 'missed';
          li.textContent = (t.met ? 'met: ' : 'MISSED: ') + t.name + ': ' + t.measured + ' (target ' + t.target + ')';
          tl.appendChild(li);
        }
        const rt = document.getElementById('routers');
        for (const [name, d] of Object.entries(data.routers)) {
          const tr = document.createElement('tr');
          tr.innerHTML = '<td><b></b></td><td></td>';
          tr.children[0].firstChild.textContent = name; tr.children[1].textContent = d;
          rt.appendChild(tr);
        }
        const routers = Object.keys(data.routers);
        const charts = [
          {key: r => r.ttftSeconds.p50, title: 'median TTFT (s)', log: true},
          {key: r => r.ttftSeconds.p90, title: 'p90 TTFT (s)', log: true},
          {key: r => r.goodputPerMin, title: 'goodput (requests/min within the SLO)', log: false},
          {key: r => r.e2eSeconds.p50, title: 'median end-to-end latency (s)', log: false},
          {key: r => r.itlSeconds.p50, title: 'median inter-token latency (s)', log: false},
          {key: r => 100 * r.prefixHitRate, title: 'prefix-cache hit rate (%%)', log: false},
        ];
        const container = document.getElementById('workloads');
        for (const w of data.workloads) {
          const h = document.createElement('h2'); h.textContent = 'Workload: ' + w.name; container.appendChild(h);
          const grid = document.createElement('div'); grid.className = 'grid'; container.appendChild(grid);
          const runs = data.runs.filter(r => r.workload === w.name);
          const xs = [...new Set(runs.map(r => r.x))].sort((a, b) => a - b);
          const xLabel = runs.length && runs[0].load.startsWith('c=') ? 'concurrency' : 'load';
          for (const c of charts) {
            const div = document.createElement('div'); div.className = 'chart'; grid.appendChild(div);
            const series = routers.map(name => ({
              name, type: 'line', symbolSize: 6,
              lineStyle: {width: name.startsWith('kinference') ? 3 : 1.5},
              data: xs.map(x => { const r = runs.find(q => q.router === name && q.x === x);
                                  const v = r ? c.key(r) : null;
                                  return [x, (v === null || Number.isNaN(v)) ? null : v]; })
            }));
            echarts.init(div).setOption({
              title: {text: w.name + ': ' + c.title, textStyle: {fontSize: 13}},
              tooltip: {trigger: 'axis'},
              legend: {type: 'scroll', bottom: 0},
              grid: {left: 60, right: 20, top: 40, bottom: 60},
              xAxis: {type: xs.length > 2 && xs[xs.length - 1] / Math.max(xs[0], 1e-9) > 8 ? 'log' : 'value',
                      name: xLabel, nameLocation: 'middle', nameGap: 25, logBase: 2},
              yAxis: {type: c.log ? 'log' : 'value', scale: true},
              series
            });
          }
        }
        </script>
        </body></html>
        """.formatted(escape(result.scenario().name()), echartsScript(), escape(result.scenario().name()), table,
        data.replace("</", "<\\/"));
  }

  /** ECharts' minified script, from the webjar on the class path. */
  static String echartsScript() {
    try (InputStream in = resource(ECHARTS_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("ECharts is missing from the class path (" + ECHARTS_RESOURCE
            + "): add org.webjars.npm:echarts");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("</script", "<\\/script");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static @org.jspecify.annotations.Nullable InputStream resource(String name) {
    ClassLoader loader = Reports.class.getClassLoader();
    InputStream in = loader == null ? null : loader.getResourceAsStream(name);
    return in != null ? in : ClassLoader.getSystemResourceAsStream(name);
  }

  private static String escape(String s) {
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
