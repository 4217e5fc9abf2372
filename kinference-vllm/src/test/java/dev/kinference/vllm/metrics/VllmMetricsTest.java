package dev.kinference.vllm.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.EndpointMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VllmMetricsTest {

  static String page(String resource) throws IOException {
    try (InputStream in = VllmMetricsTest.class.getResourceAsStream("/" + resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void readsEachDataParallelEngineOfARealisticPage() throws IOException {
    String page = page("vllm-metrics-dp2.txt");

    EndpointMetrics e0 = VllmMetrics.read(page, 0, 7);
    assertThat(e0.running()).isEqualTo(3);
    assertThat(e0.waiting()).isEqualTo(1);
    assertThat(e0.kvUsage()).isEqualTo(0.4213);
    assertThat(e0.blockSize()).isEqualTo(16);
    assertThat(e0.numGpuBlocks()).isEqualTo(27000);
    assertThat(e0.prefixCacheQueries()).isEqualTo(123456);
    assertThat(e0.prefixCacheHits()).isEqualTo(98765);
    assertThat(e0.preemptions()).as("vllm:num_preemptions_total").isZero();
    // The latest lora_requests_info sample (highest timestamp value) is the current one.
    assertThat(e0.runningLoras()).containsExactlyInAnyOrder("sql-lora", "chat-lora");
    assertThat(e0.waitingLoras()).containsExactly("sql-lora");
    assertThat(e0.maxLoras()).isEqualTo(4);
    assertThat(e0.scrapedAtNanos()).isEqualTo(7);

    EndpointMetrics e1 = VllmMetrics.read(page, 1, 7);
    assertThat(e1.running()).isEqualTo(5);
    assertThat(e1.waiting()).isZero();
    assertThat(e1.numGpuBlocks()).isEqualTo(27001);
    assertThat(e1.preemptions()).isEqualTo(2.0);
    assertThat(e1.runningLoras()).containsExactly("chat-lora");

    EndpointMetrics all = VllmMetrics.read(page, -1, 7);
    assertThat(all.running()).isEqualTo(8);
    assertThat(all.waiting()).isEqualTo(1);
    assertThat(all.kvUsage()).isEqualTo((0.4213 + 0.125) / 2);
    assertThat(all.numGpuBlocks()).isEqualTo(54001);
    assertThat(all.prefixCacheHits()).isEqualTo(98765 + 43210);
    assertThat(all.preemptions()).as("summed over engines").isEqualTo(2.0);
    assertThat(all.runningLoras()).containsExactlyInAnyOrder("sql-lora", "chat-lora");

    assertThat(VllmMetrics.engines(page, 0).keySet()).containsExactly("0", "1");
    assertThatThrownBy(() -> VllmMetrics.read(page, 2, 0)).hasMessageContaining("no metrics for engine 2");
  }

  @Test
  void readsOlderServersMetricNames() {
    String page = """
        # TYPE vllm:num_requests_running gauge
        vllm:num_requests_running{model_name="m"} 2.0
        # TYPE vllm:num_requests_waiting gauge
        vllm:num_requests_waiting{model_name="m"} 4.0
        # TYPE vllm:gpu_cache_usage_perc gauge
        vllm:gpu_cache_usage_perc{model_name="m"} 0.5
        # TYPE vllm:gpu_prefix_cache_queries_total counter
        vllm:gpu_prefix_cache_queries_total{model_name="m"} 10.0
        # TYPE vllm:gpu_prefix_cache_hits_total counter
        vllm:gpu_prefix_cache_hits_total{model_name="m"} 4.0
        """;
    EndpointMetrics m = VllmMetrics.read(page, -1, 1);
    assertThat(m.waiting()).isEqualTo(4);
    assertThat(m.running()).isEqualTo(2);
    assertThat(m.kvUsage()).isEqualTo(0.5);
    assertThat(m.prefixCacheQueries()).isEqualTo(10);
    assertThat(m.prefixCacheHits()).isEqualTo(4);
    assertThat(m.blockSize()).isZero();
    assertThat(m.preemptions()).as("no vllm:num_preemptions_total on the page").isNaN();
    assertThat(m.maxLoras()).isEqualTo(-1);
    // A server without an engine label serves rank 0.
    assertThat(VllmMetrics.read(page, 0, 1).running()).isEqualTo(2);
    assertThat(VllmMetrics.engines(page, 1)).isEqualTo(Map.of("", m));
  }

  @Test
  void aPageWithoutVllmQueuesIsNotAVllmPage() {
    assertThatThrownBy(() -> VllmMetrics.read("up 1\n", -1, 0)).isInstanceOf(PrometheusFormatException.class)
        .hasMessageContaining("not a vLLM metrics page");
  }
}
