package dev.kinference.sim.engine;

import java.util.Objects;

/**
 * An engine's resolved configuration: what {@code vllm serve} would run with, including the derived
 * {@code num_gpu_blocks}.
 *
 * <p>{@code num_gpu_blocks} follows vLLM's memory profiling: per GPU, {@code memory x gpuMemoryUtilization} minus the
 * weights' share, minus the peak activations of a profiling pass over {@code maxNumBatchedTokens} tokens (hidden
 * states and the feed-forward intermediate in BF16, plus FP32 logits for {@code maxNumSeqs} sequences), minus
 * non-torch memory (0.5 GiB, plus 0.25 GiB of communication buffers with tensor parallelism) and the CUDA-graph pool
 * (0.5 GiB), divided by the bytes of one block on that GPU.
 *
 * @param gpu the GPU of each tensor-parallel rank
 * @param model the model
 * @param tensorParallel GPUs per engine
 * @param servedModelName the model name the server answers to (metrics label, {@code /v1/models})
 * @param blockSize tokens per KV block
 * @param numGpuBlocks KV blocks, including vLLM's reserved null block
 * @param maxNumBatchedTokens token budget of one step
 * @param maxNumSeqs most running requests
 * @param maxModelLen longest prompt plus output accepted
 * @param gpuMemoryUtilization fraction of GPU memory vLLM may use
 * @param enablePrefixCaching automatic prefix caching
 * @param stateBlocksPerSequence blocks reserved for a running sequence's recurrent state (hybrid models)
 * @param hashSeed seed of the engine's block hashes (vLLM's {@code PYTHONHASHSEED})
 * @param cpuOffloadBytes host memory of the KV offload tier over the server's GPUs, or 0 for none
 */
public record EngineConfig(GpuSpec gpu, ModelSpec model, int tensorParallel, String servedModelName, int blockSize,
    int numGpuBlocks, int maxNumBatchedTokens, int maxNumSeqs, int maxModelLen, double gpuMemoryUtilization,
    boolean enablePrefixCaching, int stateBlocksPerSequence, long hashSeed, long cpuOffloadBytes) {

  private static final double GIB = 1L << 30;

  public EngineConfig {
    Objects.requireNonNull(gpu, "gpu");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(servedModelName, "servedModelName");
    if (cpuOffloadBytes < 0) {
      throw new IllegalArgumentException("cpuOffloadBytes must not be negative: " + cpuOffloadBytes);
    }
  }

  /** Usable KV tokens: {@code (numGpuBlocks - 1) x blockSize}. */
  public long kvCapacityTokens() {
    return (long) (numGpuBlocks - 1) * blockSize;
  }

  /**
   * Prompt tokens a second the server loads from a KV offload tier: its GPUs' host links (each rank loads its
   * share, see {@link CpuOffloadTier#hostLinkBytesPerSecond}) over the KV bytes of a token.
   */
  public double offloadReloadTokensPerSecond() {
    return CpuOffloadTier.hostLinkBytesPerSecond(gpu) * tensorParallel / model.kvBytesPerToken();
  }

  /** vLLM's default {@code max_num_batched_tokens}: 8,192 on GPUs of 70 GiB or more except A100, else 2,048. */
  public static int defaultMaxNumBatchedTokens(GpuSpec gpu) {
    return bigServingGpu(gpu) ? 8192 : 2048;
  }

  /** vLLM's default {@code max_num_seqs}: 1,024 on GPUs of 70 GiB or more except A100, else 256. */
  public static int defaultMaxNumSeqs(GpuSpec gpu) {
    return bigServingGpu(gpu) ? 1024 : 256;
  }

  private static boolean bigServingGpu(GpuSpec gpu) {
    return gpu.memoryBytes() >= 70 * GIB && !gpu.name().startsWith("A100");
  }

  /**
   * KV blocks vLLM would allocate, following its memory profile.
   *
   * @throws IllegalArgumentException if the weights and activations leave no room for even a few blocks
   */
  public static int profileNumGpuBlocks(GpuSpec gpu, ModelSpec model, int tp, int blockSize,
      double gpuMemoryUtilization, int maxNumBatchedTokens, int maxNumSeqs) {
    double budget = gpu.memoryBytes() * gpuMemoryUtilization;
    double weights = model.weightBytes() / tp;
    double activations = maxNumBatchedTokens * (4.0 * model.hidden() + 2.0 * model.ffn() / tp) * 2
        + (double) maxNumSeqs * model.vocab() / tp * 4;
    double nonTorch = 0.5 * GIB + (tp > 1 ? 0.25 * GIB : 0);
    double cudaGraphs = 0.5 * GIB;
    double free = budget - weights - activations - nonTorch - cudaGraphs;
    double blockBytes = (double) blockSize * model.kvBytesPerTokenPerGroup() / tp;
    long blocks = (long) Math.floor(free / blockBytes);
    if (blocks < 16) {
      throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
          "%s does not fit on %d x %s at gpu_memory_utilization %.2f: %.1f GB of weights per GPU leave %.2f GB for "
              + "the KV cache", model.name(), tp, gpu.name(), gpuMemoryUtilization, weights / 1e9, free / 1e9));
    }
    return (int) Math.min(Integer.MAX_VALUE - 1, blocks);
  }
}
