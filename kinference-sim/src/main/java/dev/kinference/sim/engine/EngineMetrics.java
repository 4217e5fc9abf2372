package dev.kinference.sim.engine;

import dev.kinference.endpoint.EndpointMetrics;
import java.util.Map;
import java.util.Set;

/**
 * A snapshot of what the engine's {@code /metrics} endpoint shows, under vLLM's metric names, plus a few
 * diagnostics a real server does not export (marked below). Counters count since the engine (re)started.
 *
 * @param timestampNanos when the snapshot was taken, in the engine's clock
 * @param waiting {@code vllm:num_requests_waiting}
 * @param running {@code vllm:num_requests_running}
 * @param kvCacheUsage {@code vllm:kv_cache_usage_perc}: 1 - free blocks / usable blocks (cached blocks no request
 *     uses count as free, as in vLLM)
 * @param blockSize {@code vllm:cache_config_info{block_size}}
 * @param numGpuBlocks {@code vllm:cache_config_info{num_gpu_blocks}}
 * @param prefixCacheQueries {@code vllm:prefix_cache_queries_total}: prompt tokens of admitted requests
 * @param prefixCacheHits {@code vllm:prefix_cache_hits_total}: of those, tokens found in the prefix cache
 * @param promptTokens {@code vllm:prompt_tokens_total}
 * @param generationTokens {@code vllm:generation_tokens_total}
 * @param preemptions {@code vllm:num_preemptions_total}
 * @param requestSuccess {@code vllm:request_success_total} by {@code finished_reason}
 * @param ttft {@code vllm:time_to_first_token_seconds}
 * @param itl {@code vllm:inter_token_latency_seconds} (same buckets as {@code time_per_output_token_seconds})
 * @param e2e {@code vllm:e2e_request_latency_seconds}
 * @param freeBlocks diagnostic: free blocks, including cached evictable ones
 * @param cachedBlocks diagnostic: blocks holding a prefix-cache hash (in use or evictable)
 * @param steps diagnostic: engine steps run
 * @param busyNanos diagnostic: time spent in steps
 */
public record EngineMetrics(long timestampNanos, int waiting, int running, double kvCacheUsage, int blockSize,
    int numGpuBlocks, long prefixCacheQueries, long prefixCacheHits, long promptTokens, long generationTokens,
    long preemptions, Map<FinishReason, Long> requestSuccess, LatencyHistogram ttft, LatencyHistogram itl,
    LatencyHistogram e2e, int freeBlocks, int cachedBlocks, long steps, long busyNanos) {

  public EngineMetrics {
    requestSuccess = Map.copyOf(requestSuccess);
  }

  /** What a router's scraper would make of these metrics, scraped at {@code scrapedAtNanos}. */
  public EndpointMetrics toEndpointMetrics(long scrapedAtNanos) {
    return new EndpointMetrics(waiting, running, kvCacheUsage, blockSize, numGpuBlocks, prefixCacheQueries,
        prefixCacheHits, preemptions, Set.of(), Set.of(), -1, scrapedAtNanos);
  }
}
