package dev.kinference.sim.engine;

import java.util.Objects;

/**
 * The roofline that times one engine step (one forward pass over every scheduled token of every scheduled
 * sequence) on {@code tp} GPUs:
 *
 * <pre>
 *   memory  = ((weights - input embedding) / tp + recurrent state) / (bandwidth x bandwidthEfficiency)
 *           + KV read and written / (bandwidth x bandwidthEfficiency x 0.6)
 *   compute = 2 x activeParams x tokens / tp / (matmul peak x eta(tokens) x computeEfficiencyScale)
 *           + 4 x attention pairs x qHeads x headDim x kvLayers / tp / (BF16 peak x 0.5 x computeEfficiencyScale)
 *   comm    = 2 x layers x (allReduceLatency + 2 (tp-1)/tp x tokens x hidden x 2 bytes / link bandwidth)   if tp > 1
 *   step    = max(memory, compute) + comm + stepOverhead + 30 us x sequences
 * </pre>
 *
 * The input embedding table (vocab x hidden, BF16) is not streamed by a step: a step gathers one row a token (the
 * output projection, a separate matrix in every built-in model, is streamed like any other weight). Counting the
 * table as read made a Qwen3-8B decode step on an H100 11% slower than vLLM's measured 7.28 ms.
 *
 * <p>where {@code eta(tokens)} is the matrix-multiply efficiency measured on H100 (Vidur profiling: 29% at 128
 * tokens, 64% at 512, 74% at 1,024, 77% at 2,048; held at 29% below 128 tokens, where the step is bandwidth-bound
 * anyway), times the GPU's {@code computeEfficiencyScale} (0.7: the rest of a layer, norms, activations, launch
 * gaps, takes about 40% more time than its GEMMs). So prefill is compute-bound and decode bandwidth-bound, with the
 * crossover where it falls on real hardware. Paged attention reads the KV cache at 60% of the bandwidth efficiency
 * the weight GEMMs reach, and the engine's CPU side (scheduling, sampling, detokenizing) costs 30 us a sequence a
 * step; both matter at large batches (see {@code kinference-sim/README.md} for the calibration). Attention pairs are
 * {@code sum over sequences of new x (context + (new + 1) / 2)}: causal attention of
 * the new tokens over the cached context and over each other. That term makes prefill superlinear in context: on
 * the default hybrid model on an L40S a 50,000-token prompt costs about twice its linear share (see {@link
 * #attentionSecondsPerTokenPair()}), and the router's {@code TtftModel} carries the same term.
 *
 * <p>Immutable and thread-safe.
 */
public final class StepCostModel {

  private static final double[] ETA_TOKENS = {128, 512, 1024, 2048, 4096};
  private static final double[] ETA = {0.29, 0.64, 0.74, 0.77, 0.78};
  private static final double ATTENTION_EFFICIENCY = 0.5;
  private static final double PER_SEQUENCE_OVERHEAD_SECONDS = 30e-6;
  /** Paged-attention decode kernels reach this fraction of the bandwidth the weight GEMMs reach. */
  private static final double KV_BANDWIDTH_RATIO = 0.6;

  private final GpuSpec gpu;
  private final ModelSpec model;
  private final int tp;
  private final double weightBytesPerGpu;
  private final double streamedWeightBytesPerGpu;
  private final double kvBytesPerTokenPerGpu;
  private final double stateBytesPerSequencePerGpu;
  private final double effectiveBandwidth;
  private final double matmulPeak;
  private final double attentionPeak;
  private final double linearFlopsPerToken;
  private final double attentionFlopsPerPair;

  public StepCostModel(GpuSpec gpu, ModelSpec model, int tensorParallel) {
    this.gpu = Objects.requireNonNull(gpu, "gpu");
    this.model = Objects.requireNonNull(model, "model");
    if (tensorParallel < 1 || tensorParallel > 64) {
      throw new IllegalArgumentException("tensorParallel must be in [1, 64]: " + tensorParallel);
    }
    this.tp = tensorParallel;
    this.weightBytesPerGpu = model.weightBytes() / tp;
    double embeddingBytes = (double) model.vocab() * model.hidden() * Dtype.BF16.bytes();
    this.streamedWeightBytesPerGpu = Math.max(model.weightBytes() / 2, model.weightBytes() - embeddingBytes) / tp;
    this.kvBytesPerTokenPerGpu = (double) model.kvBytesPerToken() / tp;
    this.stateBytesPerSequencePerGpu = (double) model.stateBytesPerSequence() / tp;
    this.effectiveBandwidth = gpu.bandwidthBytesPerSecond() * gpu.bandwidthEfficiency();
    this.matmulPeak = gpu.matmulFlops(model.weightDtype()) * gpu.computeEfficiencyScale();
    this.attentionPeak = gpu.bf16Flops() * ATTENTION_EFFICIENCY * gpu.computeEfficiencyScale();
    this.linearFlopsPerToken = 2 * model.activeParams() / tp;
    this.attentionFlopsPerPair = 4.0 * model.qHeads() * model.headDim() * model.kvLayers() / tp;
  }

  public GpuSpec gpu() {
    return gpu;
  }

  public ModelSpec model() {
    return model;
  }

  public int tensorParallel() {
    return tp;
  }

  /** Matrix-multiply efficiency at {@code tokens} tokens a step (before the GPU's scale). */
  public static double matmulEfficiency(double tokens) {
    if (tokens <= ETA_TOKENS[0]) {
      return ETA[0];
    }
    for (int i = 1; i < ETA_TOKENS.length; i++) {
      if (tokens <= ETA_TOKENS[i]) {
        double f = (Math.log(tokens) - Math.log(ETA_TOKENS[i - 1]))
            / (Math.log(ETA_TOKENS[i]) - Math.log(ETA_TOKENS[i - 1]));
        return ETA[i - 1] + f * (ETA[i] - ETA[i - 1]);
      }
    }
    return ETA[ETA.length - 1];
  }

  /**
   * Seconds for one step.
   *
   * @param sequences sequences scheduled in the step
   * @param tokens new tokens over all of them (prefill chunks plus one a decode)
   * @param kvTokens sum over the sequences of context plus new tokens: KV read by attention and written
   * @param attentionPairs sum over the sequences of {@code new x (context + (new + 1) / 2)}
   */
  public double stepSeconds(int sequences, long tokens, long kvTokens, double attentionPairs) {
    if (sequences <= 0 || tokens <= 0) {
      return 0;
    }
    double bytes = streamedWeightBytesPerGpu + 2 * sequences * stateBytesPerSequencePerGpu;
    double memory = bytes / effectiveBandwidth
        + kvTokens * kvBytesPerTokenPerGpu / (effectiveBandwidth * KV_BANDWIDTH_RATIO);
    double linear = tokens * linearFlopsPerToken / (matmulPeak * matmulEfficiency((double) tokens));
    double attention = attentionPairs * attentionFlopsPerPair / attentionPeak;
    double seconds = Math.max(memory, linear + attention);
    if (tp > 1) {
      double allReduceBytes = tokens * (double) model.hidden() * 2;
      double perAllReduce = gpu.allReduceLatencySeconds()
          + 2.0 * (tp - 1) / tp * allReduceBytes / gpu.linkBytesPerSecond();
      seconds += 2.0 * model.layers() * perAllReduce;
    }
    return seconds + gpu.stepOverheadSeconds() + PER_SEQUENCE_OVERHEAD_SECONDS * sequences;
  }

  /** Seconds for a decode step of {@code batch} sequences whose contexts average {@code meanContext} tokens. */
  public double decodeStepSeconds(int batch, double meanContext) {
    return stepSeconds(batch, batch, (long) (batch * (meanContext + 1)), batch * (meanContext + 1));
  }

  /** Seconds to prefill one prompt of {@code tokens} tokens alone, in chunks of {@code chunk} tokens. */
  public double prefillSeconds(int tokens, int chunk) {
    double total = 0;
    for (int done = 0; done < tokens; done += chunk) {
      int n = Math.min(chunk, tokens - done);
      total += stepSeconds(1, n, done + n, n * (done + (n + 1) / 2.0));
    }
    return total;
  }

  /**
   * Seconds of attention per (new token, context token) pair in a compute-bound step: {@code 4 x qHeads x headDim x
   * kvLayers / tp} FLOPs (the score and value multiply-adds of each full-attention layer) at the GPU's BF16 peak
   * times the attention kernels' efficiency (0.5) and the GPU's {@code computeEfficiencyScale}. The coefficient to
   * give the router's {@code TtftModel} for this deployment.
   */
  public double attentionSecondsPerTokenPair() {
    return attentionFlopsPerPair / attentionPeak;
  }

  /** Weight bytes each GPU holds. */
  public double weightBytesPerGpu() {
    return weightBytesPerGpu;
  }

  @Override
  public String toString() {
    return "StepCostModel[" + model.name() + " on " + tp + "x " + gpu.name() + "]";
  }
}
