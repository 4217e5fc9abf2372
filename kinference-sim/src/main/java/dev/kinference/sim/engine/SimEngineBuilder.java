package dev.kinference.sim.engine;

import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Configures a {@link SimEngine}. Unset values take vLLM's defaults for the GPU ({@code vllm serve}): block size
 * 16, {@code gpu_memory_utilization} 0.9, {@code max_num_batched_tokens} and {@code max_num_seqs} per
 * {@link EngineConfig#defaultMaxNumBatchedTokens}, {@code num_gpu_blocks} from memory profiling,
 * {@code max_model_len} the model's, capped to what the KV cache holds. Not thread-safe.
 */
public final class SimEngineBuilder {
  private GpuSpec gpu = GpuSpec.H100;
  private ModelSpec model = ModelSpec.QWEN3_8B;
  private int tensorParallel = 1;
  private @Nullable String servedModelName;
  private int blockSize = 16;
  private int numGpuBlocks;
  private int maxNumBatchedTokens;
  private int maxNumSeqs;
  private int maxModelLen;
  private double gpuMemoryUtilization = 0.9;
  private boolean enablePrefixCaching = true;
  private long cpuOffloadBytes;
  private long hashSeed = 0x6B696E666572656EL;
  long startNanos;
  @Nullable Consumer<EngineStepEvents> kvEventListener;
  @Nullable Consumer<StepRecord> stepObserver;

  SimEngineBuilder() {}

  public SimEngineBuilder gpu(GpuSpec gpu) {
    this.gpu = Objects.requireNonNull(gpu, "gpu");
    return this;
  }

  public SimEngineBuilder model(ModelSpec model) {
    this.model = Objects.requireNonNull(model, "model");
    return this;
  }

  /** GPUs per engine ({@code --tensor-parallel-size}). Default 1. */
  public SimEngineBuilder tensorParallel(int tp) {
    if (tp < 1 || tp > 64) {
      throw new IllegalArgumentException("tensorParallel must be in [1, 64]: " + tp);
    }
    this.tensorParallel = tp;
    return this;
  }

  /** The served model name ({@code --served-model-name}). Default: the model's name. */
  public SimEngineBuilder servedModelName(String name) {
    if (name.isBlank()) {
      throw new IllegalArgumentException("servedModelName must not be blank");
    }
    this.servedModelName = name;
    return this;
  }

  /** Tokens per KV block. Default 16. */
  public SimEngineBuilder blockSize(int size) {
    if (size < 1 || size > 4096) {
      throw new IllegalArgumentException("blockSize must be in [1, 4096]: " + size);
    }
    this.blockSize = size;
    return this;
  }

  /** Overrides the profiled number of KV blocks ({@code --num-gpu-blocks-override}); includes the null block. */
  public SimEngineBuilder numGpuBlocks(int blocks) {
    if (blocks < 2) {
      throw new IllegalArgumentException("numGpuBlocks must be at least 2: " + blocks);
    }
    this.numGpuBlocks = blocks;
    return this;
  }

  public SimEngineBuilder maxNumBatchedTokens(int tokens) {
    if (tokens < 1) {
      throw new IllegalArgumentException("maxNumBatchedTokens must be positive: " + tokens);
    }
    this.maxNumBatchedTokens = tokens;
    return this;
  }

  public SimEngineBuilder maxNumSeqs(int seqs) {
    if (seqs < 1) {
      throw new IllegalArgumentException("maxNumSeqs must be positive: " + seqs);
    }
    this.maxNumSeqs = seqs;
    return this;
  }

  public SimEngineBuilder maxModelLen(int tokens) {
    if (tokens < 2) {
      throw new IllegalArgumentException("maxModelLen must be at least 2: " + tokens);
    }
    this.maxModelLen = tokens;
    return this;
  }

  public SimEngineBuilder gpuMemoryUtilization(double fraction) {
    if (!(fraction > 0 && fraction <= 1)) {
      throw new IllegalArgumentException("gpuMemoryUtilization must be in (0, 1]: " + fraction);
    }
    this.gpuMemoryUtilization = fraction;
    return this;
  }

  /** Automatic prefix caching. Default on, as in vLLM V1. */
  public SimEngineBuilder enablePrefixCaching(boolean enable) {
    this.enablePrefixCaching = enable;
    return this;
  }

  /**
   * Host memory for a KV offload tier (vLLM's offloading connector, {@code kv_offloading_size}), in bytes over
   * the server's GPUs; 0 (the default) for none. See {@link CpuOffloadTier}.
   */
  public SimEngineBuilder cpuOffloadBytes(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cpuOffloadBytes must not be negative: " + bytes);
    }
    this.cpuOffloadBytes = bytes;
    return this;
  }

  /** Seed of the engine's block hashes. Engines with different seeds hash the same tokens differently. */
  public SimEngineBuilder hashSeed(long seed) {
    this.hashSeed = seed;
    return this;
  }

  /** The clock's initial value. Default 0; a real-time driver passes {@link System#nanoTime()}. */
  public SimEngineBuilder startNanos(long nanos) {
    this.startNanos = nanos;
    return this;
  }

  /** Receives each step's KV events (on the driving thread, at the step's end). Default: none. */
  public SimEngineBuilder kvEventListener(Consumer<EngineStepEvents> listener) {
    this.kvEventListener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /** Receives a {@link StepRecord} as each step is scheduled; for tests and tracing. Default: none. */
  public SimEngineBuilder stepObserver(Consumer<StepRecord> observer) {
    this.stepObserver = Objects.requireNonNull(observer, "observer");
    return this;
  }

  /**
   * Builds the engine.
   *
   * @throws IllegalArgumentException if the model does not fit, or the settings contradict each other
   */
  public SimEngine build() {
    int batched = maxNumBatchedTokens > 0 ? maxNumBatchedTokens : EngineConfig.defaultMaxNumBatchedTokens(gpu);
    int seqs = maxNumSeqs > 0 ? maxNumSeqs : EngineConfig.defaultMaxNumSeqs(gpu);
    // vLLM raises a hybrid attention/Mamba model's block size until an attention page holds a Mamba state
    int size = Math.max(blockSize, model.mambaBlockSize());
    int blocks = numGpuBlocks > 0 ? numGpuBlocks
        : EngineConfig.profileNumGpuBlocks(gpu, model, tensorParallel, size, gpuMemoryUtilization, batched,
            seqs);
    long blockBytes = (long) size * model.kvBytesPerTokenPerGroup();
    // a Mamba model's running state takes one block (one padded page per layer) in each Mamba group
    int stateBlocks = model.mambaGroups() > 0 ? model.mambaGroups()
        : model.stateBytesPerSequence() == 0 ? 0
        : (int) ((model.stateBytesPerSequence() + blockBytes - 1) / blockBytes);
    if (model.mambaGroups() > 0 && enablePrefixCaching && batched < size) {
      // align mode cuts prefill chunks at block boundaries: a smaller budget could never schedule a long prompt
      throw new IllegalArgumentException("max_num_batched_tokens " + batched + " is below the " + size
          + "-token block of " + model.name() + " (its Mamba groups cut prefill chunks at block boundaries)");
    }
    if (model.kvCacheGroups() > 1 && cpuOffloadBytes > 0) {
      throw new IllegalArgumentException("a CPU offload tier for a model with several KV-cache groups ("
          + model.name() + ") is not modelled");
    }
    // every attention group holds the whole sequence while it is computed (a sliding-window group frees its older
    // blocks later); a Mamba model also holds its last checkpoint beside its running state
    long capacity = (blocks - 1 - 2L * stateBlocks) / model.attentionGroups() * size;
    if (capacity < size) {
      throw new IllegalArgumentException("the KV cache (" + blocks + " blocks) cannot hold one sequence");
    }
    int len = maxModelLen > 0 ? maxModelLen : (int) Math.min(model.maxModelLen(), capacity);
    if (len > capacity) {
      throw new IllegalArgumentException("max_model_len " + len + " exceeds the KV cache's " + capacity
          + " tokens; lower maxModelLen");
    }
    EngineConfig config = new EngineConfig(gpu, model, tensorParallel,
        servedModelName != null ? servedModelName : model.name(), size, blocks, batched, seqs, len,
        gpuMemoryUtilization, enablePrefixCaching, stateBlocks, hashSeed, cpuOffloadBytes);
    return new SimEngine(this, config);
  }
}
