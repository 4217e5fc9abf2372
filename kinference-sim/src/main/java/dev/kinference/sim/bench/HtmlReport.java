package dev.kinference.sim.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The self-contained HTML report of a {@link BenchmarkResult}: setup, targets, and per workload its charts and the
 * summary table. Stateless.
 *
 * <p>Charts are drawn by Apache ECharts, whose minified script is read from the {@code org.webjars.npm:echarts} jar
 * at report time and inlined, so the report is one file that opens offline, with tooltips and log axes; the build
 * ships no JavaScript of its own beyond the lines that lay the data out. Each chart sits in its own card in a grid
 * of two equal columns, and is drawn only once every card is in the page (a chart sized while the grid still had one
 * card drew itself as wide as the page, over its neighbour); one legend per workload, in the page, toggles a router
 * in all of that workload's charts. Every router has its own colour, line style and marker; ours is drawn thickest.
 * A workload swept over several loads gets a line per router against load plus bars of its pooled figures; one run
 * at a single load (the demo) gets bars, each router's TTFT distribution, and requests finished over time.
 *
 * <p>{@code window.kinferenceCharts} lists the charts with their cards, for the rendering test. Charts are drawn on
 * canvases, or as SVG elements when the page's URL ends in {@code #svg} ({@code bench/report-svg.py} composes those
 * into one SVG image per workload).
 */
final class HtmlReport {

  static final String ECHARTS_RESOURCE = "META-INF/resources/webjars/echarts/5.3.1/dist/echarts.min.js";

  private HtmlReport() {}

  static String render(BenchmarkResult result) {
    String data;
    try {
      data = new ObjectMapper().writeValueAsString(Reports.jsonTree(result));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String name = Reports.escape(result.scenario().name());
    return PAGE.replace("@TITLE@", name).replace("@TABLE@", Reports.escape(Reports.table(result)))
        .replace("@DATA@", data.replace("</", "<\\/")).replace("@ECHARTS@", echartsScript());
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
    ClassLoader loader = HtmlReport.class.getClassLoader();
    InputStream in = loader == null ? null : loader.getResourceAsStream(name);
    return in != null ? in : ClassLoader.getSystemResourceAsStream(name);
  }

  // The ECharts script is substituted last: its text is never searched for the other placeholders.
  private static final String PAGE = """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <title>Kinference benchmark: @TITLE@</title>
      <style>
      body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
      h1{font-size:22px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
      .grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px}
      @media (max-width:900px){.grid{grid-template-columns:minmax(0,1fr)}}
      .card{border:1px solid #e3e3e3;border-radius:6px;padding:6px;min-width:0;overflow:hidden}
      .chart{height:360px;width:100%}
      .legend{display:flex;flex-wrap:wrap;gap:6px 14px;margin:8px 0 12px}
      .legend button{display:flex;align-items:center;gap:6px;border:1px solid #ddd;border-radius:4px;
        background:#fff;padding:2px 8px;font:inherit;font-size:13px;cursor:pointer}
      .legend button.off{opacity:.35}
      .legend button.ours{font-weight:700}
      pre{background:#f7f7f7;padding:12px;overflow-x:auto;font-size:12px}
      .met{color:#1a7f37} .missed{color:#cf222e;font-weight:600}
      table{border-collapse:collapse;font-size:13px} td,th{padding:3px 8px;border-bottom:1px solid #eee}
      </style>
      <script>@ECHARTS@</script>
      </head><body>
      <h1>Kinference routing benchmark: @TITLE@</h1>
      <p id="desc"></p>
      <h2>Targets</h2><ul id="targets"></ul>
      <div id="workloads"></div>
      <h2>Routers</h2><table id="routers"></table>
      <h2>Summary</h2><pre>@TABLE@</pre>
      <script>
      const data = @DATA@;
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
      const ours = data.ours;
      // One colour, dash and marker per router (Tableau 10 and black); ours thickest and on top.
      const STYLES = {
        'kinference-precise': ['#d62728', 'solid', 'circle'],
        'kinference-approx': ['#ff7f0e', 'dashed', 'emptyCircle'],
        'random': ['#7f7f7f', 'dotted', 'rect'],
        'round-robin': ['#8c564b', 'dashed', 'emptyRect'],
        'least-request': ['#e377c2', 'dotted', 'triangle'],
        'power-of-two': ['#bcbd22', 'dashed', 'emptyTriangle'],
        'sglang-cache-aware': ['#17becf', 'solid', 'diamond'],
        'llm-d-approx': ['#1f77b4', 'dashed', 'emptyDiamond'],
        'llm-d-precise': ['#2ca02c', 'solid', 'pin'],
        'dynamo-kv': ['#9467bd', 'solid', 'arrow'],
        'oracle': ['#111111', [8, 3, 2, 3], 'roundRect'],
      };
      // for routers not named above, such as the replicated NAME@N of --router-replicas (ten of them by default)
      const SPARE = ['#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d', '#31a354',
                     '#756bb1', '#636363', '#5254a3', '#8ca252', '#bd9e39', '#ad494a', '#a55194', '#6baed6',
                     '#fd8d3c', '#74c476', '#9e9ac8', '#969696'];
      function styleOf(name) {
        const i = routers.indexOf(name);
        const [color, dash, symbol] = STYLES[name] || [SPARE[i % SPARE.length], ['solid', 'dashed', 'dotted'][i % 3],
                                                       'circle'];
        const mine = name === ours;
        return {color, dash, symbol, width: mine ? 4 : 2, size: mine ? 10 : 7, z: mine ? 10 : 2};
      }
      function legendSwatch(name) {
        const s = styleOf(name);
        const dash = Array.isArray(s.dash) ? s.dash.join(' ') : s.dash === 'dashed' ? '6 3' : s.dash === 'dotted'
            ? '2 3' : '';
        return '<svg width="30" height="10" aria-hidden="true"><line x1="0" y1="5" x2="30" y2="5" stroke="' +
            s.color + '" stroke-width="' + Math.min(s.width, 3) + '" stroke-dasharray="' + dash + '"/></svg>';
      }
      function lineSeries(name, points) {
        const s = styleOf(name);
        return {name, type: 'line', data: points, symbol: s.symbol, symbolSize: s.size, z: s.z,
                connectNulls: false, itemStyle: {color: s.color},
                lineStyle: {color: s.color, width: s.width, type: s.dash}, emphasis: {focus: 'series'}};
      }
      function barOption(title, names, values, unit) {
        return {
          title: {text: title, textStyle: {fontSize: 13}},
          tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
          legend: {show: false, data: names},
          grid: {left: 8, right: 60, top: 40, bottom: 24, containLabel: true}, // room for the unit, "req/min"
          xAxis: {type: 'value', name: unit, nameLocation: 'end', nameGap: 6},
          yAxis: {type: 'category', data: names, inverse: true},
          // a series per router (its colour, and the legend toggles it), each with a bar in its own row only
          series: names.map((name, i) => ({
            name, type: 'bar', barGap: '-100%', barMaxWidth: 22,
            data: names.map((n, j) => j === i ? (Number.isFinite(values[i]) ? values[i] : null) : null),
            itemStyle: {color: styleOf(name).color, borderColor: name === ours ? '#000' : undefined,
                        borderWidth: name === ours ? 2 : 0},
            label: {show: true, position: 'right', fontSize: 11,
                    formatter: p => p.value === null ? '' : (Math.abs(p.value) >= 100 ? p.value.toFixed(0)
                        : p.value >= 10 ? p.value.toFixed(1) : p.value.toFixed(2))}
          }))
        };
      }
      function lineOption(title, xName, xLog, yLog, series, yName, xLogBase) {
        return {
          title: {text: title, textStyle: {fontSize: 13}},
          tooltip: {trigger: 'axis'},
          legend: {show: false, data: series.map(s => s.name)},
          grid: {left: 8, right: 24, top: 40, bottom: 30, containLabel: true},
          xAxis: {type: xLog ? 'log' : 'value', logBase: xLogBase || 2, name: xName, nameLocation: 'middle', nameGap: 24,
                  scale: !xLog},
          yAxis: {type: yLog ? 'log' : 'value', name: yName || '', scale: true},
          series
        };
      }
      const sweepCharts = [
        {key: r => r.ttftSeconds.p50, title: 'median TTFT, every request (s)', log: true},
        {key: r => r.ttftSeconds.p90, title: 'p90 TTFT, every request (s)', log: true},
        {key: r => r.goodputPerMin, title: 'goodput (requests/min within the SLO)', log: false},
        {key: r => r.e2eSeconds.p50, title: 'median end-to-end latency of finished requests (s)', log: false},
        {key: r => r.itlSeconds.p50, title: 'median inter-token latency (s)', log: false},
        {key: r => 100 * r.prefixHitRate, title: 'prefix-cache hit rate (%)', log: false},
      ];
      const positive = v => (v === null || v === undefined || Number.isNaN(v) || v <= 0) ? null : v;
      const pending = [];
      const container = document.getElementById('workloads');
      for (const w of data.workloads) {
        const h = document.createElement('h2'); h.textContent = 'Workload: ' + w.name; container.appendChild(h);
        const legend = document.createElement('div'); legend.className = 'legend'; container.appendChild(legend);
        const grid = document.createElement('div'); grid.className = 'grid'; container.appendChild(grid);
        const section = [];
        const add = option => {
          const card = document.createElement('div'); card.className = 'card'; grid.appendChild(card);
          const div = document.createElement('div'); div.className = 'chart'; card.appendChild(div);
          pending.push({card, div, option, section});
        };
        const runs = data.runs.filter(r => r.workload === w.name);
        const names = routers.filter(n => runs.some(r => r.router === n));
        for (const name of names) {
          const b = document.createElement('button');
          b.className = name === ours ? 'ours' : '';
          b.innerHTML = legendSwatch(name) + '<span></span>';
          b.lastChild.textContent = name;
          b.addEventListener('click', () => {
            b.classList.toggle('off');
            for (const c of section) { c.dispatchAction({type: 'legendToggleSelect', name}); }
          });
          legend.appendChild(b);
        }
        const xs = [...new Set(runs.map(r => r.x))].sort((a, b) => a - b);
        const pooled = n => w.pooled[n] || {};
        if (xs.length > 1) {
          const xLabel = runs[0].load.startsWith('c=') ? 'concurrency' : runs[0].load.includes('QPS')
              ? 'requests/s' : 'load';
          const xLog = xs[xs.length - 1] / Math.max(xs[0], 1e-9) > 8;
          for (const c of sweepCharts) {
            const series = names.map(name => lineSeries(name, xs.map(x => {
              const r = runs.find(q => q.router === name && q.x === x);
              const v = r ? c.key(r) : null;
              return [x, c.log ? positive(v) : (v === null || Number.isNaN(v) ? null : v)];
            })));
            add(lineOption(c.title, xLabel, xLog, c.log, series));
          }
          add(barOption('peak goodput over the sweep (requests/min)', names,
              names.map(n => pooled(n).peakGoodputPerMin), 'req/min'));
          add(barOption('median TTFT over the sweep, every request (s)', names,
              names.map(n => pooled(n).ttftP50), 's'));
          add(barOption('p90 TTFT over the sweep, every request (s)', names,
              names.map(n => pooled(n).ttftP90), 's'));
          add(barOption('requests finished (%)', names,
              names.map(n => pooled(n).requests ? 100 * pooled(n).finished / pooled(n).requests : null), '%'));
        } else {
          const run = n => runs.find(r => r.router === n) || null;
          const bars = [
            ['median TTFT, every request (s)', r => r.ttftSeconds.p50, 's'],
            ['p90 TTFT, every request (s)', r => r.ttftSeconds.p90, 's'],
            ['goodput (requests/min within the SLO)', r => r.goodputPerMin, 'req/min'],
            ['throughput (requests/min finished)', r => r.throughputPerMin, 'req/min'],
            ['prefix-cache hit rate (%)', r => 100 * r.prefixHitRate, '%'],
            ['requests finished (%)', r => r.requests ? 100 * r.finished / r.requests : null, '%'],
          ];
          for (const [title, f, unit] of bars) {
            add(barOption(title, names, names.map(n => run(n) ? f(run(n)) : null), unit));
          }
          add(lineOption('TTFT distribution, every request', 'TTFT (s)', true, false,
              names.map(n => lineSeries(n, ((run(n) || {}).ttftCdf || [])
                  .filter(p => p[1] > 0).map(p => [p[1], p[0]]))), 'percentile', 10));
          const seconds = Math.max(1, ...names.map(n => ((run(n) || {}).finishedPerSecond || []).length));
          const bucket = Math.max(1, Math.ceil(seconds / 120));
          const timeline = n => {
            const f = (run(n) || {}).finishedPerSecond || [];
            const out = [];
            for (let s = 0; s < f.length; s += bucket) {
              let sum = 0;
              for (let k = s; k < Math.min(f.length, s + bucket); k++) { sum += f[k]; }
              out.push([s + bucket / 2, sum * 60 / bucket]);
            }
            return out;
          };
          add(lineOption('requests finished over time (per minute, ' + bucket + ' s buckets)', 'time (s)', false,
              false, names.map(n => lineSeries(n, timeline(n))), 'req/min'));
        }
      }
      // Charts are sized only now, with every card in its grid cell. '#svg' asks for SVG elements instead of
      // canvases, so that bench/report-svg.py can take the charts out of the page as text; drawn at once, without
      // the animation, which headless Chromium's page dump would catch half-way (bars short, lines not yet drawn).
      const renderer = location.hash === '#svg' ? 'svg' : 'canvas';
      window.kinferenceCharts = [];
      for (const p of pending) {
        const chart = echarts.init(p.div, null, {renderer});
        chart.setOption(renderer === 'svg' ? {...p.option, animation: false} : p.option);
        p.section.push(chart);
        window.kinferenceCharts.push({chart, card: p.card, div: p.div});
      }
      window.addEventListener('resize', () => window.kinferenceCharts.forEach(c => c.chart.resize()));
      </script>
      </body></html>
      """;
}
