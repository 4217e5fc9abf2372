package dev.kinference.jmh.vllm;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.vllm.metrics.PrometheusText;
import dev.kinference.vllm.metrics.VllmMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Reading a realistic vLLM {@code /metrics} page (two data-parallel engines, every vLLM histogram, Python client
 * and HTTP metrics: 602 lines, 54 KB): the whole Prometheus parse, and the scraper's work of turning it into one
 * engine's {@link EndpointMetrics}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MetricsParseBench {

  private String page;

  @Setup
  public void setUp() {
    try (InputStream in = MetricsParseBench.class.getResourceAsStream("vllm-metrics-dp2.txt")) {
      if (in == null) {
        throw new IllegalStateException("vllm-metrics-dp2.txt is missing");
      }
      page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every sample parsed (names and labels as strings), none kept. */
  @Benchmark
  public void parsePage(Blackhole bh) {
    PrometheusText.parse(page, (name, labels, count, value, ts) -> bh.consume(value));
  }

  /** What the scraper does with a page for one endpoint. */
  @Benchmark
  public EndpointMetrics readEngineMetrics() {
    return VllmMetrics.read(page, 0, 0);
  }
}
