package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.LoadPattern;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders every kind of HTML report in headless Chromium (a sweep of several workloads and every router, a single load
 * point like the demo's, a trace replay, and replicated routers drawn as SVG elements by {@code #svg}) and
 * checks what it drew: each chart's canvas (or SVG) lies within its card, every series has points and each point lies
 * within its own chart's plot area (a chart sized before the grid had its columns was drawn as wide as the page, its
 * points in the next card), the routers' colours differ, and the legend's entries do not overlap. Screenshots go to
 * {@code target/report-screenshots/} for people to look at. Needs the {@code chromium} binary (Debian package
 * {@code chromium}).
 */
class ReportRenderingTest {

  private static final Path SCREENSHOTS = Path.of("target", "report-screenshots");

  /** Measures the charts once they are drawn and writes the result, base64 JSON, into the page. */
  private static final String PROBE = """
      <script>
      window.addEventListener('load', () => setTimeout(() => {
        const inside = (r, o, slack) => r.left >= o.left - slack && r.right <= o.right + slack
            && r.top >= o.top - slack && r.bottom <= o.bottom + slack;
        const out = {charts: [], legends: []};
        const grids = [...document.querySelectorAll('.grid')];
        for (const c of (window.kinferenceCharts || [])) {
          const card = c.card.getBoundingClientRect();
          const canvas = c.div.querySelector('canvas, svg').getBoundingClientRect();
          const entry = {title: c.chart.getOption().title[0].text, canvasInCard: inside(canvas, card, 1),
                         canvasWidth: canvas.width, cardWidth: card.width, series: [],
                         renderer: c.div.querySelector('canvas') ? 'canvas' : 'svg',
                         animated: c.chart.getOption().animation !== false,
                         section: grids.indexOf(c.card.parentElement)};
          c.chart.getModel().eachSeries(s => {
            const d = s.getData();
            const area = s.coordinateSystem.getArea ? s.coordinateSystem.getArea() : s.coordinateSystem.getRect();
            let drawn = 0, outside = 0;
            const flat = d.getLayout('points');
            for (let i = 0; i < d.count(); i++) {
              const l = flat ? [flat[2 * i], flat[2 * i + 1]] : d.getItemLayout(i);
              if (!l) { continue; }
              const pts = Array.isArray(l) ? [l] : [[l.x, l.y], [l.x + l.width, l.y + l.height]];
              if (pts.some(p => !Number.isFinite(p[0]) || !Number.isFinite(p[1]))) { continue; }
              drawn++;
              if (pts.some(p => p[0] < area.x - 1.5 || p[0] > area.x + area.width + 1.5 || p[1] < area.y - 1.5
                  || p[1] > area.y + area.height + 1.5 || p[0] > c.chart.getWidth() || p[1] > c.chart.getHeight())) {
                outside++;
              }
            }
            entry.series.push({name: s.name, drawn, outside, color: String(s.get(['itemStyle', 'color']) || '')});
          });
          out.charts.push(entry);
        }
        for (const legend of document.querySelectorAll('.legend')) {
          const boxes = [...legend.children].map(b => b.getBoundingClientRect());
          let overlaps = 0;
          for (let i = 0; i < boxes.length; i++) {
            for (let j = i + 1; j < boxes.length; j++) {
              const a = boxes[i], b = boxes[j];
              if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
                overlaps++;
              }
            }
          }
          out.legends.push({entries: boxes.length, overlaps});
        }
        const pre = document.createElement('pre');
        pre.id = 'render-check';
        pre.textContent = btoa(JSON.stringify(out));
        document.body.appendChild(pre);
      }, 300));
      </script>
      """;

  private static final VirtualFleet.Window SHORT =
      new VirtualFleet.Window(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5));
  private static final List<LoadPattern> TWO_LOADS =
      List.of(new LoadPattern.ClosedLoop(2), new LoadPattern.ClosedLoop(16));

  @Test
  void aSweepReportOfSeveralWorkloadsAndEveryRouterDrawsEveryChartInsideItsCard(@TempDir Path dir) throws Exception {
    Benchmark.Scenario s = Scenarios.smoke().withLoads(TWO_LOADS).withWindow(SHORT);
    assertThat(s.routers()).isEqualTo(Routers.ALL);
    assertThat(s.workloads()).hasSize(3);
    Path html = Reports.writeAll(Benchmark.run(s, Benchmark.Progress.NONE, 2), dir, "sweep").html();
    JsonNode check = render(html, "sweep", "");
    // per workload, six lines against load and four bar charts, each chart in its own workload's grid
    assertChartsDrawnWithin(check, 30, Routers.ALL.size(), "canvas");
    assertThat(check.get("legends")).hasSize(3);
    for (int i = 0; i < 30; i++) {
      assertThat(check.get("charts").get(i).get("section").asInt()).as("chart %d's workload", i).isEqualTo(i / 10);
    }
  }

  /** Also the SVG renderer's test ({@code #svg}, for {@code bench/report-svg.py}): the same checks hold. */
  @Test
  void aReportOfReplicatedRoutersDrawnAsSvgGivesEveryReplicaCountItsOwnColour(@TempDir Path dir) throws Exception {
    // the routers of `kinference bench --router-replicas 2`: named NAME@N, none of them among the named styles
    List<String> routers = List.of("kinference-precise@1", "kinference-precise@2", "kinference-precise@2s",
        "kinference-approx@1", "kinference-approx@2", "kinference-approx@2s", "llm-d-precise@1", "llm-d-precise@2",
        "llm-d-approx@1", "llm-d-approx@2");
    Benchmark.Scenario s = Scenarios.smoke().withWorkloads(List.of("shared-prefix")).withRouters(routers)
        .withLoads(TWO_LOADS).withWindow(SHORT);
    Path html = Reports.writeAll(Benchmark.run(s, Benchmark.Progress.NONE, 2), dir, "replicas-svg").html();
    assertChartsDrawnWithin(render(html, "replicas-svg", "#svg"), 10, routers.size(), "svg");
  }

  @Test
  void aTraceReplayReportIsASingleLoadPointLikeTheDemos(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("trace.jsonl");
    try (var in = getClass().getResourceAsStream("/traces/mooncake-sample.jsonl")) {
      // its first 50 requests (of 200): the report is the same, the simulation a quarter
      List<String> lines = new String(java.util.Objects.requireNonNull(in).readAllBytes(), StandardCharsets.UTF_8)
          .lines().toList();
      Files.write(trace, lines.subList(0, 50), StandardCharsets.UTF_8);
    }
    Benchmark.Scenario s = Scenarios.trace(trace, 1, 2).withRouters(List.of(Routers.OURS, Routers.RANDOM));
    Path html = Reports.writeAll(Benchmark.run(s, Benchmark.Progress.NONE, 2), dir, "trace").html();
    JsonNode check = render(html, "trace", "");
    assertChartsDrawnWithin(check, 8, 2, "canvas");
    assertThat(titles(check)).contains("TTFT distribution, every request")
        .anyMatch(t -> t.startsWith("requests finished over time"));
  }

  @Test
  void aSingleLoadPointReportLikeTheDemosGetsBarsADistributionAndATimeline(@TempDir Path dir) throws Exception {
    Benchmark.Scenario s = Scenarios.smoke().withWorkloads(List.of("shared-prefix"))
        .withRouters(List.of(Routers.OURS, Routers.RANDOM))
        .withLoads(List.of(new LoadPattern.ClosedLoop(8)))
        .withWindow(new VirtualFleet.Window(Duration.ofSeconds(2), Duration.ofSeconds(20), Duration.ofSeconds(10)));
    Path html = Reports.writeAll(Benchmark.run(s, Benchmark.Progress.NONE, 1), dir, "demo").html();
    JsonNode check = render(html, "demo", "");
    assertChartsDrawnWithin(check, 8, 2, "canvas");
    assertThat(titles(check)).contains("TTFT distribution, every request")
        .anyMatch(t -> t.startsWith("requests finished over time"))
        .noneMatch(t -> t.contains("over the sweep"));
  }

  private static List<String> titles(JsonNode check) {
    List<String> titles = new ArrayList<>();
    check.get("charts").forEach(c -> titles.add(c.get("title").asText()));
    return titles;
  }

  private static void assertChartsDrawnWithin(JsonNode check, int charts, int routers, String renderer) {
    assertThat(check.get("charts")).hasSize(charts);
    for (JsonNode c : check.get("charts")) {
      String title = c.get("title").asText();
      assertThat(c.get("renderer").asText()).as(title + ": drawn by").isEqualTo(renderer);
      if (renderer.equals("svg")) {
        // bench/report-svg.py takes the page as Chromium dumps it: an animated chart is caught half-drawn there.
        assertThat(c.get("animated").asBoolean()).as(title + ": animated in #svg mode").isFalse();
      }
      assertThat(c.get("canvasInCard").asBoolean()).as("%s: canvas %s px wide in a card of %s px", title,
          c.get("canvasWidth"), c.get("cardWidth")).isTrue();
      assertThat(c.get("series")).as(title).hasSize(routers);
      Set<String> colours = new HashSet<>();
      for (JsonNode series : c.get("series")) {
        String name = title + " / " + series.get("name").asText();
        assertThat(series.get("drawn").asInt()).as(name + ": points drawn").isPositive();
        assertThat(series.get("outside").asInt()).as(name + ": points outside the plot area").isZero();
        colours.add(series.get("color").asText().toLowerCase(java.util.Locale.ROOT));
      }
      assertThat(colours).as(title + ": a colour per router").hasSize(routers);
    }
    for (JsonNode legend : check.get("legends")) {
      assertThat(legend.get("entries").asInt()).isEqualTo(routers);
      assertThat(legend.get("overlaps").asInt()).as("overlapping legend entries").isZero();
    }
  }

  /**
   * Renders {@code html}{@code fragment} with the probe, in one Chromium run that writes a screenshot of the report
   * (its first 3000 px) and returns the probe's findings.
   */
  private static JsonNode render(Path html, String name, String fragment) throws Exception {
    String chromium = chromium();
    Path probed = html.resolveSibling(name + "-probed.html");
    String page = Files.readString(html, StandardCharsets.UTF_8);
    int end = page.lastIndexOf("</body>");
    Files.writeString(probed, page.substring(0, end) + PROBE + page.substring(end), StandardCharsets.UTF_8);
    Files.createDirectories(SCREENSHOTS);
    Path shot = SCREENSHOTS.resolve(name + ".png").toAbsolutePath();
    Files.deleteIfExists(shot);
    String dom = run(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--window-size=1400,3000", "--virtual-time-budget=10000", "--screenshot=" + shot, "--dump-dom",
        probed.toUri() + fragment));
    Matcher m = Pattern.compile("<pre id=\"render-check\">([A-Za-z0-9+/=]+)</pre>").matcher(dom);
    if (!m.find()) {
      fail("the report's charts were not measured; Chromium's page:%n%s", dom.length() > 2000
          ? dom.substring(dom.length() - 2000) : dom);
    }
    assertThat(shot).exists();
    return new ObjectMapper().readTree(Base64.getDecoder().decode(m.group(1)));
  }

  private static String chromium() {
    for (String candidate : List.of("chromium", "chromium-browser", "google-chrome")) {
      for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(java.io.File.pathSeparator)) {
        Path p = Path.of(dir, candidate);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    return fail("chromium is needed to render the reports: apt-get install chromium");
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Path out = Files.createTempFile("chromium", ".out");
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(false).redirectOutput(out.toFile())
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        fail("chromium did not finish within 60 s: %s", command);
      }
      return Files.readString(out, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
