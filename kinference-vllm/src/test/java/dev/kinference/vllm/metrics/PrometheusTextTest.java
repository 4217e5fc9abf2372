package dev.kinference.vllm.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

  @Test
  void parsesEscapedLabelValuesTrailingCommasAndTimestamps() {
    String page = """
        # a free comment
        #
        metric_without_labels 12
        escaped{path="C:\\\\dir\\\\file",quote="say \\"hi\\"",nl="a\\nb",} 3.5 1712345678901
        spaced { a = "1" , b="x y" }   -7
        colon:name:total{le="0.5"}\t1e-3
        """;
    List<PrometheusText.Sample> samples = PrometheusText.samples(page);

    assertThat(samples).hasSize(4);
    assertThat(samples.get(0)).isEqualTo(
        new PrometheusText.Sample("metric_without_labels", Map.of(), 12, PrometheusText.NO_TIMESTAMP));
    PrometheusText.Sample escaped = samples.get(1);
    assertThat(escaped.label("path")).isEqualTo("C:\\dir\\file");
    assertThat(escaped.label("quote")).isEqualTo("say \"hi\"");
    assertThat(escaped.label("nl")).isEqualTo("a\nb");
    assertThat(escaped.value()).isEqualTo(3.5);
    assertThat(escaped.timestampMillis()).isEqualTo(1712345678901L);
    assertThat(samples.get(2).labels()).containsExactly(Map.entry("a", "1"), Map.entry("b", "x y"));
    assertThat(samples.get(2).value()).isEqualTo(-7);
    assertThat(samples.get(3).name()).isEqualTo("colon:name:total");
    assertThat(samples.get(3).value()).isEqualTo(0.001);
  }

  @Test
  void parsesSpecialValues() {
    List<PrometheusText.Sample> samples = PrometheusText.samples("""
        a NaN
        b +Inf
        c -Inf
        d inf
        e nan
        f 1.5E+10
        g -0.0
        h 12.0
        i 0x1p3
        """.replace("i 0x1p3\n", ""));
    assertThat(samples).extracting(PrometheusText.Sample::value).containsExactly(Double.NaN,
        Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, Double.NaN, 1.5e10, -0.0, 12.0);
  }

  @Test
  void groupsHistogramCounterAndCreatedSamplesIntoTheirFamilies() {
    String page = """
        # HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
        # TYPE vllm:time_to_first_token_seconds histogram
        vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 2.0
        vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 3.0
        vllm:time_to_first_token_seconds_count{model_name="m"} 3.0
        vllm:time_to_first_token_seconds_sum{model_name="m"} 0.75
        # HELP vllm:prefix_cache_hits Prefix cache hits, \\\\ in tokens.\\nSecond line.
        # TYPE vllm:prefix_cache_hits counter
        vllm:prefix_cache_hits_total{model_name="m"} 42.0
        vllm:prefix_cache_hits_created{model_name="m"} 1.7e9
        lonely 1
        """;
    Map<String, PrometheusText.Family> families = PrometheusText.families(page);

    assertThat(families.keySet()).containsExactly("vllm:time_to_first_token_seconds", "vllm:prefix_cache_hits",
        "lonely");
    PrometheusText.Family ttft = families.get("vllm:time_to_first_token_seconds");
    assertThat(ttft.type()).isEqualTo("histogram");
    assertThat(ttft.samples()).hasSize(4);
    assertThat(ttft.samples().get(1).label("le")).isEqualTo("+Inf");
    PrometheusText.Family hits = families.get("vllm:prefix_cache_hits");
    assertThat(hits.type()).isEqualTo("counter");
    assertThat(hits.help()).isEqualTo("Prefix cache hits, \\ in tokens.\nSecond line.");
    assertThat(hits.samples()).extracting(PrometheusText.Sample::name)
        .containsExactly("vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits_created");
    assertThat(families.get("lonely").type()).isEqualTo("untyped");
  }

  @Test
  void toleratesCarriageReturnsAndAMissingFinalNewline() {
    assertThat(PrometheusText.samples("a 1\r\nb 2")).extracting(PrometheusText.Sample::value).containsExactly(1.0,
        2.0);
  }

  @Test
  void rejectsMalformedLinesNamingTheLine() {
    assertThatThrownBy(() -> PrometheusText.samples("ok 1\nbad{a=\"1\" 2\n"))
        .isInstanceOf(PrometheusFormatException.class).hasMessageStartingWith("line 2:");
    assertThatThrownBy(() -> PrometheusText.samples("x{a=\"unterminated} 1"))
        .hasMessageContaining("unterminated label value");
    assertThatThrownBy(() -> PrometheusText.samples("x{a=\"\\t\"} 1")).hasMessageContaining("invalid escape");
    assertThatThrownBy(() -> PrometheusText.samples("x one")).hasMessageContaining("invalid value 'one'");
    assertThatThrownBy(() -> PrometheusText.samples("x 1 12.5x")).hasMessageContaining("invalid timestamp");
    assertThatThrownBy(() -> PrometheusText.samples("x 1 2 3")).hasMessageContaining("after the timestamp");
    assertThatThrownBy(() -> PrometheusText.samples("x")).hasMessageContaining("expected a value");
    assertThatThrownBy(() -> PrometheusText.samples("9x 1")).hasMessageContaining("expected a metric name");
    assertThatThrownBy(() -> PrometheusText.families("# TYPE x nonsense\n")).hasMessageContaining("unknown metric type");
    assertThatThrownBy(() -> PrometheusText.families("# TYPE x gauge\n# TYPE x gauge\n"))
        .hasMessageContaining("second # TYPE");
    assertThatThrownBy(() -> PrometheusText.samples("<html>oops</html>")).isInstanceOf(
        PrometheusFormatException.class);
  }

  /** Regression: a HELP line's other backslashes were taken as escapes ({@code \t} lost its backslash). */
  @Test
  void helpKeepsBackslashesThatAreNotEscapes() {
    var f = PrometheusText.families("# HELP m path C:\\\\tmp \\t tab \\n line\n# TYPE m gauge\nm 1\n");
    assertThat(f.get("m").help()).isEqualTo("path C:\\tmp \\t tab \n line");
  }

  /** Regression: OpenMetrics exemplars and fractional-second timestamps failed the whole scrape. */
  @Test
  void openMetricsExemplarsAndFloatTimestampsAreAccepted() {
    List<PrometheusText.Sample> s = PrometheusText.samples("""
        a_bucket{le="0.5"} 3 # {trace_id="abc123"} 0.31 1520879607.789
        b 2 1520879607.789
        c 7 1520879607789 # {span_id="x"} 1
        """);
    assertThat(s).extracting(PrometheusText.Sample::value).containsExactly(3.0, 2.0, 7.0);
    assertThat(s.get(1).timestampMillis()).isEqualTo(1_520_879_607_789L);
    assertThat(s.get(2).timestampMillis()).isEqualTo(1_520_879_607_789L);
    assertThatThrownBy(() -> PrometheusText.samples("d 1 2 3\n")).isInstanceOf(PrometheusFormatException.class);
  }

  /** Regression: one bad line of a metric the router does not read failed the scrape of those it reads. */
  @Test
  void aBadLineOfAnUnreadMetricNeverFailsAFilteredParse() {
    String page = """
        # TYPE other_metric weird_type
        other_metric{bad label} 1
        other_metric 1 2 3 4
        # TYPE vllm:num_requests_running gauge
        vllm:num_requests_running{model_name="m"} 4
        """;
    List<Double> read = new java.util.ArrayList<>();
    PrometheusText.parse(page, n -> n.startsWith("vllm:"), (name, labels, count, value, ts) -> read.add(value));
    assertThat(read).containsExactly(4.0);
    assertThatThrownBy(() -> PrometheusText.parse("vllm:x{bad} 1\n", n -> n.startsWith("vllm:"),
        (name, labels, count, value, ts) -> { }))
        .as("a bad line of a metric it reads still fails").isInstanceOf(PrometheusFormatException.class);
    assertThatThrownBy(() -> PrometheusText.samples(page)).isInstanceOf(PrometheusFormatException.class);
    assertThatThrownBy(() -> PrometheusText.parse("<html>not metrics</html>\n", n -> n.startsWith("vllm:"),
        (name, labels, count, value, ts) -> { })).as("a page that is not metrics").isInstanceOf(
        PrometheusFormatException.class);
  }
}
