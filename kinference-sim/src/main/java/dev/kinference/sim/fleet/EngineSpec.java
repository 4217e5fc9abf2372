package dev.kinference.sim.fleet;

import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.SimEngineBuilder;
import java.util.Objects;

/**
 * One server's configuration: GPU, model, tensor parallelism, served model name and the engine settings that differ
 * from vLLM's defaults (0 = default).
 *
 * @param gpu GPU of each rank
 * @param model the model
 * @param tensorParallel GPUs per server
 * @param servedModelName the name requests use
 * @param maxNumBatchedTokens step token budget, or 0 for vLLM's default
 * @param maxNumSeqs most running requests, or 0 for vLLM's default
 * @param numGpuBlocks KV blocks, or 0 to profile them from memory
 * @param maxModelLen longest sequence, or 0 for the model's (capped to the KV cache)
 * @param cpuOffloadBytes host memory of a KV offload tier over the server's GPUs, or 0 for none
 */
public record EngineSpec(GpuSpec gpu, ModelSpec model, int tensorParallel, String servedModelName,
    int maxNumBatchedTokens, int maxNumSeqs, int numGpuBlocks, int maxModelLen, long cpuOffloadBytes) {

  /** Without an offload tier. */
  public EngineSpec(GpuSpec gpu, ModelSpec model, int tensorParallel, String servedModelName,
      int maxNumBatchedTokens, int maxNumSeqs, int numGpuBlocks, int maxModelLen) {
    this(gpu, model, tensorParallel, servedModelName, maxNumBatchedTokens, maxNumSeqs, numGpuBlocks, maxModelLen, 0);
  }

  public EngineSpec {
    Objects.requireNonNull(gpu, "gpu");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(servedModelName, "servedModelName");
    if (tensorParallel < 1 || maxNumBatchedTokens < 0 || maxNumSeqs < 0 || numGpuBlocks < 0 || maxModelLen < 0
        || cpuOffloadBytes < 0) {
      throw new IllegalArgumentException("invalid engine spec");
    }
  }

  /** vLLM's defaults for this GPU, model and tensor parallelism. */
  public static EngineSpec of(GpuSpec gpu, ModelSpec model, int tensorParallel) {
    return new EngineSpec(gpu, model, tensorParallel, model.name(), 0, 0, 0, 0);
  }

  public EngineSpec withNumGpuBlocks(int blocks) {
    return new EngineSpec(gpu, model, tensorParallel, servedModelName, maxNumBatchedTokens, maxNumSeqs, blocks,
        maxModelLen, cpuOffloadBytes);
  }

  public EngineSpec withMaxNumBatchedTokens(int tokens) {
    return new EngineSpec(gpu, model, tensorParallel, servedModelName, tokens, maxNumSeqs, numGpuBlocks,
        maxModelLen, cpuOffloadBytes);
  }

  public EngineSpec withMaxModelLen(int tokens) {
    return new EngineSpec(gpu, model, tensorParallel, servedModelName, maxNumBatchedTokens, maxNumSeqs,
        numGpuBlocks, tokens, cpuOffloadBytes);
  }

  /** These servers with a KV offload tier of {@code bytes} in host memory (0: none). */
  public EngineSpec withCpuOffloadBytes(long bytes) {
    return new EngineSpec(gpu, model, tensorParallel, servedModelName, maxNumBatchedTokens, maxNumSeqs,
        numGpuBlocks, maxModelLen, bytes);
  }

  /** An engine builder with these settings. */
  public SimEngineBuilder toBuilder() {
    SimEngineBuilder b = SimEngine.builder().gpu(gpu).model(model).tensorParallel(tensorParallel)
        .servedModelName(servedModelName);
    if (maxNumBatchedTokens > 0) {
      b.maxNumBatchedTokens(maxNumBatchedTokens);
    }
    if (maxNumSeqs > 0) {
      b.maxNumSeqs(maxNumSeqs);
    }
    if (numGpuBlocks > 0) {
      b.numGpuBlocks(numGpuBlocks);
    }
    if (maxModelLen > 0) {
      b.maxModelLen(maxModelLen);
    }
    if (cpuOffloadBytes > 0) {
      b.cpuOffloadBytes(cpuOffloadBytes);
    }
    return b;
  }

  /** For reports: {@code 1x L40S, Qwen3.5-27B-FP8}. */
  public String describe() {
    return tensorParallel + "x " + gpu.name() + ", " + model.name() + (cpuOffloadBytes == 0 ? ""
        : String.format(java.util.Locale.ROOT, ", %.0f GiB CPU offload", cpuOffloadBytes / (double) (1L << 30)));
  }
}
