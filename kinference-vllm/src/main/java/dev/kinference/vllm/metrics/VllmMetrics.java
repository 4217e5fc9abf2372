package dev.kinference.vllm.metrics;

import dev.kinference.endpoint.EndpointMetrics;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Reads what the router needs from a vLLM {@code /metrics} page, per engine (data-parallel rank, the
 * {@code engine} label):
 *
 * <ul>
 *   <li>{@code vllm:num_requests_waiting}, {@code vllm:num_requests_running};</li>
 *   <li>{@code vllm:kv_cache_usage_perc}, or the older {@code vllm:gpu_cache_usage_perc};</li>
 *   <li>{@code vllm:prefix_cache_queries_total} and {@code vllm:prefix_cache_hits_total} (older servers:
 *       {@code vllm:gpu_prefix_cache_*}; the suffix-less names are accepted too);</li>
 *   <li>{@code vllm:num_preemptions_total} (a counter; the suffix-less name is accepted too);</li>
 *   <li>{@code block_size} and {@code num_gpu_blocks} labels of {@code vllm:cache_config_info};</li>
 *   <li>{@code max_lora}, {@code running_lora_adapters} and {@code waiting_lora_adapters} labels of the
 *       {@code vllm:lora_requests_info} sample with the highest value (it is a timestamp: the client library keeps
 *       every label combination it ever set, the latest one is current).</li>
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class VllmMetrics {

  private static final Set<String> WANTED = Set.of("vllm:num_requests_waiting", "vllm:num_requests_running",
      "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:prefix_cache_queries_total",
      "vllm:prefix_cache_queries", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits",
      "vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits_total",
      "vllm:gpu_prefix_cache_hits", "vllm:num_preemptions_total", "vllm:num_preemptions", "vllm:cache_config_info",
      "vllm:lora_requests_info");

  private VllmMetrics() {}

  /**
   * The metrics of engine {@code dataParallelRank}, or of the whole server when it is -1 (queues and counters
   * summed over engines, KV usage averaged, LoRA adapters united).
   *
   * @throws PrometheusFormatException if the page is not valid Prometheus text, has no
   *     {@code vllm:num_requests_running} / {@code waiting}, or has no engine of that rank
   */
  public static EndpointMetrics read(CharSequence page, int dataParallelRank, long scrapedAtNanos) {
    return select(parse(page), dataParallelRank, scrapedAtNanos);
  }

  /** The metrics of one rank (or all, for -1) among engines already parsed. */
  static EndpointMetrics select(Map<String, Engine> engines, int dataParallelRank, long scrapedAtNanos) {
    if (engines.isEmpty()) {
      throw new PrometheusFormatException("not a vLLM metrics page: no vllm:num_requests_running or waiting");
    }
    if (dataParallelRank >= 0) {
      Engine e = engines.get(Integer.toString(dataParallelRank));
      if (e == null && engines.size() == 1 && dataParallelRank == 0) {
        e = engines.values().iterator().next();
      }
      if (e == null) {
        throw new PrometheusFormatException("no metrics for engine " + dataParallelRank + " (engines: "
            + engines.keySet() + ")");
      }
      return e.toMetrics(scrapedAtNanos);
    }
    if (engines.size() == 1) {
      return engines.values().iterator().next().toMetrics(scrapedAtNanos);
    }
    Engine total = new Engine();
    int kvCount = 0;
    double kvSum = 0;
    for (Engine e : engines.values()) {
      total.waiting = sum(total.waiting, e.waiting);
      total.running = sum(total.running, e.running);
      total.queries = sum(total.queries, e.queries);
      total.hits = sum(total.hits, e.hits);
      total.oldQueries = sum(total.oldQueries, e.oldQueries);
      total.oldHits = sum(total.oldHits, e.oldHits);
      total.preemptions = sum(total.preemptions, e.preemptions);
      double kv = e.kvUsage();
      if (!Double.isNaN(kv)) {
        kvSum += kv;
        kvCount++;
      }
      if (total.blockSize == 0) {
        total.blockSize = e.blockSize;
      }
      total.numGpuBlocks += e.numGpuBlocks;
      total.runningLoras.addAll(e.runningLoras);
      total.waitingLoras.addAll(e.waitingLoras);
      total.maxLoras = Math.max(total.maxLoras, e.maxLoras);
    }
    total.kvUsage = kvCount == 0 ? Double.NaN : kvSum / kvCount;
    return total.toMetrics(scrapedAtNanos);
  }

  /** The metrics of every engine on the page, by {@code engine} label value ("" when the page has none). */
  public static Map<String, EndpointMetrics> engines(CharSequence page, long scrapedAtNanos) {
    Map<String, EndpointMetrics> out = new TreeMap<>();
    parse(page).forEach((k, e) -> out.put(k, e.toMetrics(scrapedAtNanos)));
    return out;
  }

  private static double sum(double a, double b) {
    if (Double.isNaN(a)) {
      return b;
    }
    return Double.isNaN(b) ? a : a + b;
  }

  static Map<String, Engine> parse(CharSequence page) {
    Map<String, Engine> engines = new TreeMap<>();
    PrometheusText.parse(page, WANTED::contains, (name, labels, count, value, ts) -> {
      switch (name) {
        case "vllm:num_requests_waiting" -> engine(engines, labels, count).waiting = value;
        case "vllm:num_requests_running" -> engine(engines, labels, count).running = value;
        case "vllm:kv_cache_usage_perc" -> engine(engines, labels, count).kvUsage = value;
        case "vllm:gpu_cache_usage_perc" -> engine(engines, labels, count).oldKvUsage = value;
        case "vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries" ->
            engine(engines, labels, count).queries = value;
        case "vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits" -> engine(engines, labels, count).hits = value;
        case "vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries" ->
            engine(engines, labels, count).oldQueries = value;
        case "vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits" ->
            engine(engines, labels, count).oldHits = value;
        case "vllm:num_preemptions_total", "vllm:num_preemptions" ->
            engine(engines, labels, count).preemptions = value;
        case "vllm:cache_config_info" -> {
          Engine e = engine(engines, labels, count);
          e.blockSize = (int) number(label(labels, count, "block_size"));
          e.numGpuBlocks = number(label(labels, count, "num_gpu_blocks"));
        }
        case "vllm:lora_requests_info" -> {
          Engine e = engine(engines, labels, count);
          if (Double.isNaN(e.loraStamp) || value >= e.loraStamp) {
            e.loraStamp = value;
            e.runningLoras.clear();
            e.waitingLoras.clear();
            split(label(labels, count, "running_lora_adapters"), e.runningLoras);
            split(label(labels, count, "waiting_lora_adapters"), e.waitingLoras);
            e.maxLoras = (int) number(label(labels, count, "max_lora"));
            if (e.maxLoras == 0 && label(labels, count, "max_lora") == null) {
              e.maxLoras = -1;
            }
          }
        }
        default -> {}
      }
    });
    engines.values().removeIf(e -> Double.isNaN(e.waiting) && Double.isNaN(e.running));
    return engines;
  }

  private static Engine engine(Map<String, Engine> engines, String[] labels, int count) {
    String key = label(labels, count, "engine");
    return engines.computeIfAbsent(key == null ? "" : key, k -> new Engine());
  }

  private static @Nullable String label(String[] labels, int count, String name) {
    for (int i = 0; i < count; i++) {
      if (labels[2 * i].equals(name)) {
        return labels[2 * i + 1];
      }
    }
    return null;
  }

  private static long number(@Nullable String s) {
    if (s == null || s.isBlank() || s.equals("None")) {
      return 0;
    }
    try {
      return (long) Double.parseDouble(s.strip());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static void split(@Nullable String list, Set<String> into) {
    if (list == null) {
      return;
    }
    for (String part : list.split(",")) {
      String p = part.strip();
      if (!p.isEmpty()) {
        into.add(p);
      }
    }
  }

  /** What one engine's samples said. */
  static final class Engine {
    double waiting = Double.NaN;
    double running = Double.NaN;
    double kvUsage = Double.NaN;
    double oldKvUsage = Double.NaN;
    double queries = Double.NaN;
    double hits = Double.NaN;
    double oldQueries = Double.NaN;
    double oldHits = Double.NaN;
    double preemptions = Double.NaN;
    int blockSize;
    long numGpuBlocks;
    double loraStamp = Double.NaN;
    final Set<String> runningLoras = new LinkedHashSet<>();
    final Set<String> waitingLoras = new LinkedHashSet<>();
    int maxLoras = -1;

    double kvUsage() {
      return Double.isNaN(kvUsage) ? oldKvUsage : kvUsage;
    }

    EndpointMetrics toMetrics(long scrapedAtNanos) {
      return new EndpointMetrics(count(waiting), count(running), kvUsage(), Math.max(0, blockSize),
          Math.max(0, numGpuBlocks), Double.isNaN(queries) ? oldQueries : queries,
          Double.isNaN(hits) ? oldHits : hits, preemptions, runningLoras, waitingLoras, maxLoras, scrapedAtNanos);
    }

    private static int count(double v) {
      return Double.isNaN(v) || v < 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, Math.round(v));
    }
  }
}
