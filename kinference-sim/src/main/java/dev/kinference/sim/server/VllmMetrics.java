package dev.kinference.sim.server;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A simulated server's Prometheus metrics under vLLM's names, labels and help texts (vLLM V1's
 * {@code PrometheusStatLogger}), rendered as {@code prometheus_client} renders them. Times are in simulated
 * seconds.
 *
 * <p>Thread-safe: every method is synchronized; the engine loop records, the HTTP handler renders.
 */
final class VllmMetrics {

  static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
      2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  static final double[] ITL_BUCKETS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
      5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
  static final double[] REQUEST_LATENCY_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
      40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  static final double[] ITERATION_TOKEN_BUCKETS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  static final List<String> FINISH_REASONS = List.of("stop", "length", "abort");
  private static final int MAX_LORA_INFO_CHILDREN = 64;

  /** A fixed-bucket histogram, as {@code prometheus_client.Histogram}. */
  private static final class Histogram {
    final double[] bounds;
    final long[] counts;
    double sum;

    Histogram(double[] bounds) {
      this.bounds = bounds;
      this.counts = new long[bounds.length + 1];
    }

    void observe(double v) {
      int i = 0;
      while (i < bounds.length && v > bounds[i]) {
        i++;
      }
      counts[i]++;
      sum += v;
    }
  }

  private final TreeMap<String, String> base = new TreeMap<>();
  private final Map<String, String> cacheConfigLabels;
  private final int maxLoras;
  private final double createdSeconds;

  private int running;
  private int waiting;
  private double kvUsage;
  private double prefixQueries;
  private double prefixHits;
  private double preemptions;
  private double promptTokens;
  private double generationTokens;
  private final double[] success = new double[FINISH_REASONS.size()];
  private final Histogram promptTokensPerRequest;
  private final Histogram generationTokensPerRequest;
  private final Histogram iterationTokens = new Histogram(ITERATION_TOKEN_BUCKETS);
  private final Histogram ttft = new Histogram(TTFT_BUCKETS);
  private final Histogram itl = new Histogram(ITL_BUCKETS);
  private final Histogram e2e = new Histogram(REQUEST_LATENCY_BUCKETS);
  private final Histogram queueTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  private final Histogram prefillTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  private final Histogram decodeTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  // label values (max_lora, running, waiting) -> last time set; prometheus_client keeps every child ever set
  private final LinkedHashMap<List<String>, Double> loraInfo = new LinkedHashMap<>();

  /**
   * @param cacheConfigLabels the labels of {@code vllm:cache_config_info} besides {@code engine}, in vLLM's
   *     declaration order (they are written sorted anyway)
   * @param maxLoras LoRA slots; 0 when LoRA is disabled, which omits {@code vllm:lora_requests_info}
   * @param createdSeconds the Unix time of the {@code _created} samples
   */
  VllmMetrics(String modelName, int engineIndex, Map<String, String> cacheConfigLabels, int maxModelLen,
      int maxLoras, double createdSeconds) {
    base.put("model_name", modelName);
    base.put("engine", Integer.toString(engineIndex));
    this.cacheConfigLabels = new TreeMap<>(cacheConfigLabels);
    this.cacheConfigLabels.put("engine", Integer.toString(engineIndex));
    this.maxLoras = maxLoras;
    this.createdSeconds = createdSeconds;
    double[] tokenBuckets = oneTwoFiveBuckets(maxModelLen);
    this.promptTokensPerRequest = new Histogram(tokenBuckets);
    this.generationTokensPerRequest = new Histogram(tokenBuckets);
  }

  /** vLLM's {@code build_1_2_5_buckets}. */
  static double[] oneTwoFiveBuckets(long max) {
    List<Double> out = new ArrayList<>();
    long scale = 1;
    outer:
    while (true) {
      for (int m : new int[] {1, 2, 5}) {
        long v = m * scale;
        if (v > max) {
          break outer;
        }
        out.add((double) v);
      }
      scale *= 10;
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  synchronized void scheduler(int numRunning, int numWaiting, double kvCacheUsage) {
    running = numRunning;
    waiting = numWaiting;
    kvUsage = kvCacheUsage;
  }

  synchronized void prefixCache(long queriedTokens, long hitTokens) {
    prefixQueries += queriedTokens;
    prefixHits += hitTokens;
  }

  synchronized void iteration(int newPromptTokens, int newGenerationTokens, int newPreemptions) {
    promptTokens += newPromptTokens;
    generationTokens += newGenerationTokens;
    preemptions += newPreemptions;
    if (newPromptTokens + newGenerationTokens > 0) {
      iterationTokens.observe(newPromptTokens + newGenerationTokens);
    }
  }

  synchronized void firstToken(double ttftSeconds) {
    ttft.observe(ttftSeconds);
  }

  synchronized void interToken(double seconds) {
    itl.observe(seconds);
  }

  /** A finished request: {@code reason} is one of {@link #FINISH_REASONS}. */
  synchronized void finished(String reason, double e2eSeconds, double queuedSeconds, double prefillSeconds,
      double decodeSeconds, int requestPromptTokens, int requestGenerationTokens) {
    int i = FINISH_REASONS.indexOf(reason);
    success[i < 0 ? FINISH_REASONS.size() - 1 : i]++;
    e2e.observe(e2eSeconds);
    queueTime.observe(queuedSeconds);
    prefillTime.observe(prefillSeconds);
    decodeTime.observe(decodeSeconds);
    promptTokensPerRequest.observe(requestPromptTokens);
    generationTokensPerRequest.observe(requestGenerationTokens);
  }

  /** Sets {@code vllm:lora_requests_info} for the current adapters to {@code nowSeconds}, as vLLM each step. */
  synchronized void loraAdapters(Set<String> runningAdapters, Set<String> waitingAdapters, double nowSeconds) {
    if (maxLoras <= 0) {
      return;
    }
    List<String> key = List.of(Integer.toString(maxLoras), String.join(",", new TreeSet<>(runningAdapters)),
        String.join(",", new TreeSet<>(waitingAdapters)));
    loraInfo.remove(key);
    loraInfo.put(key, nowSeconds);
    if (loraInfo.size() > MAX_LORA_INFO_CHILDREN) {
      Iterator<List<String>> it = loraInfo.keySet().iterator();
      it.next();
      it.remove();
    }
  }

  synchronized double prefixCacheQueries() {
    return prefixQueries;
  }

  synchronized double prefixCacheHits() {
    return prefixHits;
  }

  /** The exposition text. */
  synchronized String render() {
    StringBuilder out = new StringBuilder(16_384);
    gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", running);
    gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting);
    gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", kvUsage);
    counter(out, "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.", prefixQueries);
    counter(out, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", prefixHits);
    counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", preemptions);
    counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", promptTokens);
    counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", generationTokens);
    requestSuccess(out);
    histogram(out, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", promptTokensPerRequest);
    histogram(out, "vllm:request_generation_tokens", "Number of generation tokens processed.",
        generationTokensPerRequest);
    histogram(out, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
        iterationTokens);
    histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft);
    histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itl);
    histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2e);
    histogram(out, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
        queueTime);
    histogram(out, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
        prefillTime);
    histogram(out, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
        decodeTime);
    if (maxLoras > 0) {
      PrometheusText.help(out, "vllm:lora_requests_info", "gauge", "Running stats on lora requests.");
      for (Map.Entry<List<String>, Double> e : loraInfo.entrySet()) {
        TreeMap<String, String> labels = new TreeMap<>();
        labels.put("max_lora", e.getKey().get(0));
        labels.put("running_lora_adapters", e.getKey().get(1));
        labels.put("waiting_lora_adapters", e.getKey().get(2));
        PrometheusText.sample(out, "vllm:lora_requests_info", labels, e.getValue());
      }
    }
    PrometheusText.help(out, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    PrometheusText.sample(out, "vllm:cache_config_info", cacheConfigLabels, 1.0);
    return out.toString();
  }

  private void gauge(StringBuilder out, String name, String help, double value) {
    PrometheusText.help(out, name, "gauge", help);
    PrometheusText.sample(out, name, base, value);
  }

  private void counter(StringBuilder out, String name, String help, double value) {
    PrometheusText.help(out, name + "_total", "counter", help);
    PrometheusText.sample(out, name + "_total", base, value);
    PrometheusText.help(out, name + "_created", "gauge", help);
    PrometheusText.sample(out, name + "_created", base, createdSeconds);
  }

  private void requestSuccess(StringBuilder out) {
    String name = "vllm:request_success";
    String help = "Count of successfully processed requests.";
    PrometheusText.help(out, name + "_total", "counter", help);
    for (int i = 0; i < FINISH_REASONS.size(); i++) {
      PrometheusText.sample(out, name + "_total", withReason(i), success[i]);
    }
    PrometheusText.help(out, name + "_created", "gauge", help);
    for (int i = 0; i < FINISH_REASONS.size(); i++) {
      PrometheusText.sample(out, name + "_created", withReason(i), createdSeconds);
    }
  }

  private Map<String, String> withReason(int i) {
    TreeMap<String, String> labels = new TreeMap<>(base);
    labels.put("finished_reason", FINISH_REASONS.get(i));
    return labels;
  }

  private void histogram(StringBuilder out, String name, String help, Histogram h) {
    PrometheusText.help(out, name, "histogram", help);
    long acc = 0;
    for (int i = 0; i <= h.bounds.length; i++) {
      acc += h.counts[i];
      TreeMap<String, String> labels = new TreeMap<>(base);
      labels.put("le", i < h.bounds.length ? PrometheusText.goFloat(h.bounds[i]) : "+Inf");
      PrometheusText.sample(out, name + "_bucket", labels, (double) acc);
    }
    PrometheusText.sample(out, name + "_count", base, (double) acc);
    PrometheusText.sample(out, name + "_sum", base, h.sum);
    PrometheusText.help(out, name + "_created", "gauge", help);
    PrometheusText.sample(out, name + "_created", base, createdSeconds);
  }
}
