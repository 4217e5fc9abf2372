package dev.kinference.sim.server;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.FinishReason;
import dev.kinference.sim.engine.LatencyHistogram;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A simulated server's {@code /metrics} text: the engine's {@link EngineMetrics} under vLLM V1's metric names, help
 * texts and labels ({@code PrometheusStatLogger}), rendered as {@code prometheus_client} renders them, plus
 * {@code vllm:cache_config_info} and, with LoRA enabled, {@code vllm:lora_requests_info}. Times are simulated
 * seconds.
 *
 * <p>Thread-safe: {@link #render} is synchronized (it keeps the LoRA gauge's children, which prometheus_client never
 * forgets).
 */
final class MetricsPage {

  private static final int MAX_LORA_INFO_CHILDREN = 64;

  private final TreeMap<String, String> base = new TreeMap<>();
  private final Map<String, String> cacheConfigLabels;
  private final int maxLoras;
  private final double createdSeconds;
  // (max_lora, running, waiting) -> last time set
  private final LinkedHashMap<List<String>, Double> loraInfo = new LinkedHashMap<>();

  /**
   * @param cacheConfigLabels the labels of {@code vllm:cache_config_info} besides {@code engine}
   * @param maxLoras LoRA slots; 0 when LoRA is disabled, which omits {@code vllm:lora_requests_info}
   * @param createdSeconds the Unix time of the {@code _created} samples (the server's start)
   */
  MetricsPage(String modelName, int engineIndex, Map<String, String> cacheConfigLabels, int maxLoras,
      double createdSeconds) {
    base.put("model_name", modelName);
    base.put("engine", Integer.toString(engineIndex));
    this.cacheConfigLabels = new TreeMap<>(cacheConfigLabels);
    this.cacheConfigLabels.put("engine", Integer.toString(engineIndex));
    this.maxLoras = maxLoras;
    this.createdSeconds = createdSeconds;
  }

  /**
   * The exposition text for these engine metrics and LoRA adapters (set to {@code nowSeconds}, as vLLM sets the
   * gauge each step).
   */
  synchronized String render(EngineMetrics m, Set<String> runningLoras, Set<String> waitingLoras,
      double nowSeconds) {
    StringBuilder out = new StringBuilder(16_384);
    gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", m.running());
    gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m.waiting());
    gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m.kvCacheUsage());
    counter(out, "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
        m.prefixCacheQueries());
    counter(out, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
        m.prefixCacheHits());
    counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", m.preemptions());
    counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", m.promptTokens());
    counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", m.generationTokens());
    requestSuccess(out, m.requestSuccess());
    histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.ttft());
    histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m.itl());
    histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.e2e());
    if (maxLoras > 0) {
      List<String> key = List.of(Integer.toString(maxLoras), String.join(",", new TreeSet<>(runningLoras)),
          String.join(",", new TreeSet<>(waitingLoras)));
      loraInfo.remove(key);
      loraInfo.put(key, nowSeconds);
      if (loraInfo.size() > MAX_LORA_INFO_CHILDREN) {
        Iterator<List<String>> it = loraInfo.keySet().iterator();
        it.next();
        it.remove();
      }
      PrometheusTextWriter.help(out, "vllm:lora_requests_info", "gauge", "Running stats on lora requests.");
      for (Map.Entry<List<String>, Double> e : loraInfo.entrySet()) {
        TreeMap<String, String> labels = new TreeMap<>();
        labels.put("max_lora", e.getKey().get(0));
        labels.put("running_lora_adapters", e.getKey().get(1));
        labels.put("waiting_lora_adapters", e.getKey().get(2));
        PrometheusTextWriter.sample(out, "vllm:lora_requests_info", labels, e.getValue());
      }
    }
    PrometheusTextWriter.help(out, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    PrometheusTextWriter.sample(out, "vllm:cache_config_info", cacheConfigLabels, 1.0);
    return out.toString();
  }

  private void gauge(StringBuilder out, String name, String help, double value) {
    PrometheusTextWriter.help(out, name, "gauge", help);
    PrometheusTextWriter.sample(out, name, base, value);
  }

  private void counter(StringBuilder out, String name, String help, long value) {
    PrometheusTextWriter.help(out, name + "_total", "counter", help);
    PrometheusTextWriter.sample(out, name + "_total", base, (double) value);
    PrometheusTextWriter.help(out, name + "_created", "gauge", help);
    PrometheusTextWriter.sample(out, name + "_created", base, createdSeconds);
  }

  private void requestSuccess(StringBuilder out, Map<FinishReason, Long> success) {
    String name = "vllm:request_success";
    String help = "Count of successfully processed requests.";
    PrometheusTextWriter.help(out, name + "_total", "counter", help);
    for (FinishReason r : FinishReason.values()) {
      PrometheusTextWriter.sample(out, name + "_total", withReason(r), (double) success.getOrDefault(r, 0L));
    }
    PrometheusTextWriter.help(out, name + "_created", "gauge", help);
    for (FinishReason r : FinishReason.values()) {
      PrometheusTextWriter.sample(out, name + "_created", withReason(r), createdSeconds);
    }
  }

  private Map<String, String> withReason(FinishReason r) {
    TreeMap<String, String> labels = new TreeMap<>(base);
    labels.put("finished_reason", r.wireName());
    return labels;
  }

  private void histogram(StringBuilder out, String name, String help, LatencyHistogram h) {
    PrometheusTextWriter.help(out, name, "histogram", help);
    double[] bounds = h.upperBounds();
    long[] counts = h.bucketCounts();
    long acc = 0;
    for (int i = 0; i <= bounds.length; i++) {
      acc += counts[i];
      TreeMap<String, String> labels = new TreeMap<>(base);
      labels.put("le", i < bounds.length ? PrometheusTextWriter.goFloat(bounds[i]) : "+Inf");
      PrometheusTextWriter.sample(out, name + "_bucket", labels, (double) acc);
    }
    PrometheusTextWriter.sample(out, name + "_count", base, (double) acc);
    PrometheusTextWriter.sample(out, name + "_sum", base, h.sumSeconds());
    PrometheusTextWriter.help(out, name + "_created", "gauge", help);
    PrometheusTextWriter.sample(out, name + "_created", base, createdSeconds);
  }
}
