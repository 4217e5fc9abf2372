package dev.kinference.endpoint;

import java.util.Set;

/**
 * One scrape of a server's metrics. Unknown values are {@code NaN} (doubles), 0 (sizes) or -1 (counts).
 *
 * @param waiting {@code vllm:num_requests_waiting}
 * @param running {@code vllm:num_requests_running}
 * @param kvUsage {@code vllm:kv_cache_usage_perc} (or the older {@code gpu_cache_usage_perc}), 0..1
 * @param blockSize tokens per KV block, from {@code vllm:cache_config_info}; 0 if unknown
 * @param numGpuBlocks KV blocks on the GPU, from {@code vllm:cache_config_info}; 0 if unknown
 * @param prefixCacheQueries {@code vllm:prefix_cache_queries_total}, tokens
 * @param prefixCacheHits {@code vllm:prefix_cache_hits_total}, tokens
 * @param preemptions {@code vllm:num_preemptions_total}: running requests the server preempted (and will recompute)
 *     because their KV blocks did not fit, since it started; {@code NaN} if unknown
 * @param runningLoras adapters with running requests ({@code vllm:lora_requests_info})
 * @param waitingLoras adapters with waiting requests
 * @param maxLoras adapters the server can hold at once, or -1
 * @param scrapedAtNanos {@link System#nanoTime()} when the scrape completed
 */
public record EndpointMetrics(int waiting, int running, double kvUsage, int blockSize, long numGpuBlocks,
    double prefixCacheQueries, double prefixCacheHits, double preemptions, Set<String> runningLoras,
    Set<String> waitingLoras, int maxLoras, long scrapedAtNanos) {

  public EndpointMetrics {
    runningLoras = Set.copyOf(runningLoras);
    waitingLoras = Set.copyOf(waitingLoras);
  }

  /** Metrics without the preemption counter (a server that does not publish it). */
  public EndpointMetrics(int waiting, int running, double kvUsage, int blockSize, long numGpuBlocks,
      double prefixCacheQueries, double prefixCacheHits, Set<String> runningLoras, Set<String> waitingLoras,
      int maxLoras, long scrapedAtNanos) {
    this(waiting, running, kvUsage, blockSize, numGpuBlocks, prefixCacheQueries, prefixCacheHits, Double.NaN,
        runningLoras, waitingLoras, maxLoras, scrapedAtNanos);
  }

  /** Metrics with only queue lengths and KV usage known. */
  public static EndpointMetrics of(int waiting, int running, double kvUsage, long scrapedAtNanos) {
    return new EndpointMetrics(waiting, running, kvUsage, 0, 0, Double.NaN, Double.NaN, Set.of(), Set.of(), -1,
        scrapedAtNanos);
  }

  /** These metrics with the cache configuration filled in. */
  public EndpointMetrics withCacheConfig(int newBlockSize, long newNumGpuBlocks) {
    return new EndpointMetrics(waiting, running, kvUsage, newBlockSize, newNumGpuBlocks, prefixCacheQueries,
        prefixCacheHits, preemptions, runningLoras, waitingLoras, maxLoras, scrapedAtNanos);
  }
}
