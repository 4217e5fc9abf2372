package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrometheusTextTest {

  @Test
  void floatsAreFormattedAsPrometheusClientFormatsThem() {
    assertThat(PrometheusTextWriter.goFloat(0)).isEqualTo("0.0");
    assertThat(PrometheusTextWriter.goFloat(1)).isEqualTo("1.0");
    assertThat(PrometheusTextWriter.goFloat(0.001)).isEqualTo("0.001");
    assertThat(PrometheusTextWriter.goFloat(0.25)).isEqualTo("0.25");
    assertThat(PrometheusTextWriter.goFloat(2560)).isEqualTo("2560.0");
    assertThat(PrometheusTextWriter.goFloat(123456)).isEqualTo("123456.0");
    assertThat(PrometheusTextWriter.goFloat(1000000)).isEqualTo("1e+06");
    assertThat(PrometheusTextWriter.goFloat(1712345678.123)).isEqualTo("1.712345678123e+09");
    assertThat(PrometheusTextWriter.goFloat(0.00001)).isEqualTo("1e-05");
    assertThat(PrometheusTextWriter.goFloat(0.0001)).isEqualTo("0.0001");
    assertThat(PrometheusTextWriter.goFloat(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
    assertThat(PrometheusTextWriter.goFloat(Double.NaN)).isEqualTo("NaN");
    assertThat(PrometheusTextWriter.pythonRepr(1e16)).isEqualTo("1e+16");
    assertThat(PrometheusTextWriter.pythonRepr(-2.5)).isEqualTo("-2.5");
    assertThat(PrometheusTextWriter.pythonRepr(0.1 + 0.2)).isEqualTo("0.30000000000000004");
  }

  @Test
  void labelValuesAreEscaped() {
    StringBuilder out = new StringBuilder();
    PrometheusTextWriter.sample(out, "m", new java.util.TreeMap<>(java.util.Map.of("b", "x\"y\\z\n", "a", "1")), 2);
    assertThat(out.toString()).isEqualTo("m{a=\"1\",b=\"x\\\"y\\\\z\\n\"} 2.0\n");
  }
}
