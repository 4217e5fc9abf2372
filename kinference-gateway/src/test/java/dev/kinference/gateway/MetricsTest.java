package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsTest {

  @Test
  void rendersTheTextExpositionFormatWithCumulativeBucketsAndEscapedLabels() {
    Metrics m = new Metrics();
    Metrics.Counter c = m.counter("x_total", "Things.", "tenant");
    Metrics.Histogram h = m.histogram("y_seconds", "Times.", new double[] {0.1, 1}, "tenant");
    m.gauge("z", "A gauge.", out -> out.accept(new Metrics.Gauge.Sample(List.of(), 2.5)));
    c.inc("a\"b");
    c.add(2, "plain");
    h.observe(0.05, "t");
    h.observe(0.5, "t");
    h.observe(5, "t");
    String text = m.render();
    assertThat(text).contains("# TYPE x_total counter\n")
        .contains("x_total{tenant=\"a\\\"b\"} 1\n")
        .contains("x_total{tenant=\"plain\"} 2\n")
        .contains("y_seconds_bucket{tenant=\"t\",le=\"0.1\"} 1\n")
        .contains("y_seconds_bucket{tenant=\"t\",le=\"1\"} 2\n")
        .contains("y_seconds_bucket{tenant=\"t\",le=\"+Inf\"} 3\n")
        .contains("y_seconds_count{tenant=\"t\"} 3\n")
        .contains("y_seconds_sum{tenant=\"t\"} 5.55\n")
        .contains("z 2.5\n");
    assertThat(c.sum((String) null)).isEqualTo(3);
  }
}
