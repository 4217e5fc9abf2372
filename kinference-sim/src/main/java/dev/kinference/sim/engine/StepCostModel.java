package dev.kinference.sim.engine;

import java.util.Objects;

/**
 * The roofline that times one engine step (one forward pass over every scheduled token of every scheduled
 * sequence) on {@code tp} GPUs:
 *
 * <pre>
 *   memory  = (weights / tp + KV read and written + recurrent state) / (bandwidth x bandwidthEfficiency)
 *   compute = 2 x activeParams x tokens / tp / (matmul peak x eta(tokens) x computeEfficiencyScale)
 *           + 4 x attention pairs x qHeads x headDim x kvLayers / tp / (BF16 peak x 0.5 x computeEfficiencyScale)
 *   comm    = 2 x layers x (allReduceLatency + 2 (tp-1)/tp x tokens x hidden x 2 bytes / link bandwidth)   if tp > 1
 *   step    = max(memory, compute) + comm + stepOverhead + 10 us x sequences
 * </pre>
 *
 * where {@code eta(tokens)} is the matrix-multiply efficiency measured on H100 (Vidur profiling: 29% at 128
 * tokens, 64% at 512, 74% at 1,024, 77% at 2,048; linear below 128 tokens, where the step is bandwidth-bound
 * anyway). So prefill is compute-bound and decode bandwidth-bound, with the crossover where it falls on real
 * hardware. Attention pairs are {@code sum over sequences of new x (context + (new + 1) / 2)}: causal attention of
 * the new tokens over the cached context and over each other.
 *
 * <p>Immutable and thread-safe.
 */
public final class StepCostModel {

  private static final double[] ETA_TOKENS = {128, 512, 1024, 2048, 4096};
  private static final double[] ETA = {0.29, 0.64, 0.74, 0.77, 0.78};
  private static final double ATTENTION_EFFICIENCY = 0.5;
  private static final double PER_SEQUENCE_OVERHEAD_SECONDS = 10e-6;

  private final GpuSpec gpu;
  private final ModelSpec model;
  private final int tp;
  private final double weightBytesPerGpu;
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
    double bytes = weightBytesPerGpu + kvTokens * kvBytesPerTokenPerGpu
        + 2 * sequences * stateBytesPerSequencePerGpu;
    double memory = bytes / effectiveBandwidth;
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

  /** Weight bytes each GPU holds. */
  public double weightBytesPerGpu() {
    return weightBytesPerGpu;
  }

  @Override
  public String toString() {
    return "StepCostModel[" + model.name() + " on " + tp + "x " + gpu.name() + "]";
  }
}
