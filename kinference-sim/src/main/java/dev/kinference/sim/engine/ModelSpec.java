package dev.kinference.sim.engine;

import java.util.List;
import java.util.Objects;

/**
 * A model's shape as the roofline and the KV pool see it.
 *
 * <p>Linear layers cost {@code 2 x activeParams} FLOPs a token; attention costs {@code 4 x context x qHeads x
 * headDim} FLOPs a token in each of the {@code kvLayers} layers that keep a KV cache; a step reads the weights once
 * ({@code weightBytes}) and each scheduled sequence's KV cache. Hybrid models (linear-attention layers beside
 * attention layers) keep KV only in their attention layers and hold a fixed recurrent state per running sequence.
 *
 * @param name display name (also the default served model name)
 * @param layers transformer layers
 * @param kvLayers layers with a KV cache (all of them for a dense transformer)
 * @param hidden hidden size
 * @param qHeads attention (query) heads
 * @param kvHeads key/value heads (grouped-query attention)
 * @param headDim dimension of one attention head
 * @param ffn feed-forward (intermediate) size
 * @param vocab vocabulary size
 * @param params total parameters
 * @param activeParams parameters used per token (less than {@code params} for mixture-of-experts models)
 * @param weightDtype the weights' data type; FP8 weights use FP8 tensor cores where the GPU has them
 * @param weightBytes bytes of weights in memory (quantised models keep some tensors in BF16)
 * @param kvDtype the KV cache's data type
 * @param maxModelLen the longest sequence the model accepts
 * @param stateBytesPerSequence recurrent state held per running sequence (0 for a pure transformer)
 * @param slidingLayers how many of the {@code kvLayers} attend only to the last {@code slidingWindow} tokens (0 if
 *     none); they must be half of them, so that vLLM puts them in one KV-cache group of the full-attention group's
 *     size (as for gpt-oss; a Gemma-3-like 5:1 interleave would make six groups, which is not modelled)
 * @param slidingWindow the sliding window in tokens, or 0
 * @param mambaCacheGroups whether the linear-attention layers' state lives in vLLM's Mamba KV-cache groups as
 *     {@code mamba_cache_mode align} keeps it with prefix caching on (a raised block size, states cached at block
 *     boundaries, a hit only as far as every group holds a state); if false the state is a per-sequence
 *     reservation and prefix hits are counted on the attention layers alone
 */
public record ModelSpec(String name, int layers, int kvLayers, int hidden, int qHeads, int kvHeads, int headDim,
    int ffn, int vocab, double params, double activeParams, Dtype weightDtype, double weightBytes, Dtype kvDtype,
    int maxModelLen, long stateBytesPerSequence, int slidingLayers, int slidingWindow, boolean mambaCacheGroups) {

  /** Qwen3-8B, BF16. */
  public static final ModelSpec QWEN3_8B = dense("Qwen3-8B", 36, 4096, 32, 8, 128, 12_288, 151_936, 8.2e9, 40_960);

  /** Qwen3-32B, BF16. */
  public static final ModelSpec QWEN3_32B =
      dense("Qwen3-32B", 64, 5120, 64, 8, 128, 25_600, 151_936, 32.8e9, 40_960);

  /** Llama-3.1-8B(-Instruct), BF16. */
  public static final ModelSpec LLAMA_3_1_8B =
      dense("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14_336, 128_256, 8.03e9, 131_072);

  /** Llama-3.1-70B(-Instruct), BF16. */
  public static final ModelSpec LLAMA_3_1_70B =
      dense("Llama-3.1-70B", 80, 8192, 64, 8, 128, 28_672, 128_256, 70.6e9, 131_072);

  /**
   * A ~27B hybrid model in FP8 shaped like Qwen3.5-27B (the Kinference experiment's model class): 64 layers of which
   * 16 are full attention (24 query / 4 KV heads of dimension 256, 64 KiB of BF16 KV a token) and 48 linear
   * attention, about 33 GB of FP8 weights (embeddings stay BF16). This default keeps the linear-attention state as a
   * per-sequence reservation of 48 MiB (the estimate the engine was calibrated with, 48 layers x 32 heads x 128 x
   * 128 BF16 values) and counts prefix hits on the attention layers at token-block granularity, as if every state
   * were kept: the deployment under which the published Kinference figures are reproduced (docs/BENCHMARKS.md,
   * "Hybrid models' KV-cache groups"). {@link #QWEN3_5_27B_FP8_MAMBA_ALIGN} is the same model as vLLM's align mode
   * keeps it.
   */
  public static final ModelSpec QWEN3_5_27B_FP8 = new ModelSpec("Qwen3.5-27B-FP8", 64, 16, 5120, 24, 4, 256,
      17_408, 248_320, 27e9, 27e9, Dtype.FP8, 33e9, Dtype.BF16, 262_144, 48L << 20, 0, 0, false);

  /**
   * {@link #QWEN3_5_27B_FP8} as vLLM serves it with prefix caching on ({@code mamba_cache_mode align}, the only mode
   * Qwen3.5 supports): the linear-attention (Gated DeltaNet) state is Qwen3.5-27B's, per layer a convolution state
   * of 3 x 10,240 BF16 values and a recurrent state of 48 heads x 128 x 128 FP32 values ({@code mamba_ssm_dtype}
   * float32), 3,207,168 bytes, 154 MB a sequence over the 48 layers, kept as three Mamba KV-cache groups of 16
   * layers beside the full-attention group (see {@link #mambaBlockSize}).
   */
  public static final ModelSpec QWEN3_5_27B_FP8_MAMBA_ALIGN = new ModelSpec("Qwen3.5-27B-FP8-mamba-align", 64, 16,
      5120, 24, 4, 256, 17_408, 248_320, 27e9, 27e9, Dtype.FP8, 33e9, Dtype.BF16, 262_144, 48L * 3_207_168, 0, 0,
      true);

  /**
   * A gpt-oss-20b-shaped model: 24 layers alternating sliding-window attention (a 128-token window) and full
   * attention, 64 query / 8 KV heads of dimension 64, a mixture of experts with 20.9B parameters of which 3.6B are
   * active, about 13 GB of MXFP4 weights (computed at BF16 rate here). vLLM keeps two KV-cache groups of 12 layers:
   * group 0 full attention, group 1 the sliding window.
   */
  public static final ModelSpec GPT_OSS_20B = new ModelSpec("gpt-oss-20b", 24, 24, 2880, 64, 8, 64, 2880, 201_088,
      20.9e9, 3.6e9, Dtype.BF16, 13e9, Dtype.BF16, 131_072, 0, 12, 128, false);

  public ModelSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(weightDtype, "weightDtype");
    Objects.requireNonNull(kvDtype, "kvDtype");
    if (layers < 1 || kvLayers < 1 || kvLayers > layers || hidden < 1 || qHeads < 1 || kvHeads < 1
        || kvHeads > qHeads || headDim < 1 || ffn < 1 || vocab < 1 || maxModelLen < 16) {
      throw new IllegalArgumentException("invalid shape for model " + name);
    }
    if (!(params > 0) || !(activeParams > 0) || activeParams > params || !(weightBytes > 0)
        || stateBytesPerSequence < 0) {
      throw new IllegalArgumentException("invalid size for model " + name);
    }
    if (slidingLayers < 0 || slidingWindow < 0 || (slidingLayers == 0) != (slidingWindow == 0)) {
      throw new IllegalArgumentException("model " + name + ": slidingLayers and slidingWindow are both 0 or both "
          + "positive: " + slidingLayers + ", " + slidingWindow);
    }
    if (slidingLayers > 0 && 2 * slidingLayers != kvLayers) {
      throw new IllegalArgumentException("model " + name + ": only half of the KV layers sliding is modelled (two "
          + "equal KV-cache groups); got " + slidingLayers + " of " + kvLayers);
    }
    if (mambaCacheGroups && (stateBytesPerSequence == 0 || kvLayers == layers || slidingLayers > 0)) {
      throw new IllegalArgumentException("model " + name + ": Mamba KV-cache groups need linear-attention layers "
          + "(kvLayers below layers) with a state, and no sliding-window group");
    }
  }

  /** A dense BF16 transformer whose weights take two bytes a parameter. */
  public static ModelSpec dense(String name, int layers, int hidden, int qHeads, int kvHeads, int headDim, int ffn,
      int vocab, double params, int maxModelLen) {
    return new ModelSpec(name, layers, layers, hidden, qHeads, kvHeads, headDim, ffn, vocab, params, params,
        Dtype.BF16, params * 2, Dtype.BF16, maxModelLen, 0, 0, 0, false);
  }

  /** The built-in models. */
  public static List<ModelSpec> builtIns() {
    return List.of(QWEN3_8B, QWEN3_32B, LLAMA_3_1_8B, LLAMA_3_1_70B, QWEN3_5_27B_FP8, QWEN3_5_27B_FP8_MAMBA_ALIGN,
        GPT_OSS_20B);
  }

  /** The built-in model with this name (case-insensitive, '-', '_' and '.' ignored). */
  public static ModelSpec named(String name) {
    String wanted = GpuSpec.normalise(name).replace(".", "");
    for (ModelSpec m : builtIns()) {
      if (GpuSpec.normalise(m.name()).replace(".", "").equals(wanted)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown model '" + name + "'; known: "
        + builtIns().stream().map(ModelSpec::name).toList());
  }

  /** KV-cache bytes a token takes across all GPUs: {@code 2 x kvLayers x kvHeads x headDim x dtype}. */
  public long kvBytesPerToken() {
    return 2L * kvLayers * kvHeads * headDim * kvDtype.bytes();
  }

  /**
   * vLLM's KV-cache groups: 2 (full attention, then the sliding window) if some layers slide; for a model with
   * linear-attention layers, the full-attention group and {@link #mambaGroups} Mamba groups; else 1.
   */
  public int kvCacheGroups() {
    return attentionGroups() + mambaGroups();
  }

  /** The KV-cache groups that hold attention KV: 2 with a sliding-window group, else 1. */
  public int attentionGroups() {
    return slidingLayers > 0 ? 2 : 1;
  }

  /** Linear-attention layers kept in Mamba KV-cache groups: 0 unless {@code mambaCacheGroups}. */
  public int mambaLayers() {
    return mambaCacheGroups ? layers - kvLayers : 0;
  }

  /**
   * vLLM's Mamba KV-cache groups ({@code _get_kv_cache_groups_uniform_page_size}): layers are grouped by type into
   * groups of the smaller type's layer count, so 48 linear-attention layers beside 16 attention layers make three
   * Mamba groups of 16 layers. 0 for a model without linear attention.
   */
  public int mambaGroups() {
    int mamba = mambaLayers();
    if (mamba == 0) {
      return 0;
    }
    int groupSize = Math.min(kvLayers, mamba);
    if (Math.max(kvLayers, mamba) < 1.5 * groupSize) {
      groupSize = Math.max(kvLayers, mamba);
    }
    return (mamba + groupSize - 1) / groupSize;
  }

  /**
   * The {@code group_idx} vLLM gives the full-attention group: groups are numbered in the order the layer types first
   * appear, and a Qwen3.5-like model starts with linear-attention layers, so its Mamba groups come first (0, 1, 2)
   * and full attention is group 3. 0 for other models.
   */
  public int fullAttentionGroup() {
    return mambaGroups();
  }

  /**
   * The attention block size vLLM sets for a hybrid attention/Mamba model ({@code Platform._align_hybrid_block_size}
   * with {@code mamba_cache_mode} {@code align} or {@code none}): the smallest multiple of the kernel's 16 tokens
   * whose attention page (one layer's KV for the block) holds one layer's Mamba state, whose page is then padded to
   * it. 784 tokens for Qwen3.5-27B with a BF16 KV cache (3,207,168-byte state, 4,096 bytes a token), 1,568 with FP8.
   * 0 for a model without linear attention.
   */
  public int mambaBlockSize() {
    int mamba = mambaLayers();
    if (mamba == 0) {
      return 0;
    }
    long statePage = (stateBytesPerSequence + mamba - 1) / mamba;
    long attentionPagePerToken = 2L * kvHeads * headDim * kvDtype.bytes();
    long kernel = 16;
    return (int) (kernel * ((statePage + kernel * attentionPagePerToken - 1) / (kernel * attentionPagePerToken)));
  }

  /**
   * KV bytes one token takes in one block of one KV-cache group (vLLM's page size over the block size). Every group
   * has as many layers, so this is also a Mamba group's page over the block size.
   */
  public long kvBytesPerTokenPerGroup() {
    return kvBytesPerToken() / attentionGroups();
  }

  /** This model with another name (the served model name). */
  public ModelSpec withName(String newName) {
    return new ModelSpec(newName, layers, kvLayers, hidden, qHeads, kvHeads, headDim, ffn, vocab, params,
        activeParams, weightDtype, weightBytes, kvDtype, maxModelLen, stateBytesPerSequence, slidingLayers, slidingWindow,
        mambaCacheGroups);
  }

  /** This model with its KV cache in another data type ({@code --kv-cache-dtype fp8}). */
  public ModelSpec withKvDtype(Dtype dtype) {
    return new ModelSpec(name, layers, kvLayers, hidden, qHeads, kvHeads, headDim, ffn, vocab, params,
        activeParams, weightDtype, weightBytes, dtype, maxModelLen, stateBytesPerSequence, slidingLayers, slidingWindow,
        mambaCacheGroups);
  }
}
