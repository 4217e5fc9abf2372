package dev.kinference.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The engine model against published vLLM figures (deterministic computations on the virtual clock, not timings). The
 * targets of issue 25 hold on the measured rows, so a change to the model that loses them fails here; the rows that
 * are fitted, untraced or engineering ranges are printed by {@code kinference bench --calibration}, not asserted.
 */
class CalibrationTest {

  @Test
  void theMeasuredRowsMeetTheTargetsMedianErrorTenPercentNoneOverTwentyFive() {
    List<Calibration.Point> points = Calibration.points();
    System.out.print(Calibration.table(points));
    Calibration.Summary summary = Calibration.summary(points);
    // vLLM's CI (10 rows), GPUStack's Qwen3-8B TPOT (4), MLPerf (2) and BLIS's ground truth (11): dropping or
    // relabelling a row to meet the targets shows here
    assertThat(summary.rows()).isEqualTo(26);
    assertThat(summary.medianAbsError()).isLessThanOrEqualTo(0.10);
    assertThat(summary.maxAbsError()).isLessThanOrEqualTo(0.25);
    assertThat(points).filteredOn(p -> p.source() == Calibration.Source.RANGE).hasSize(14);
  }

  @Test
  void aRangeRowsErrorIsTheDistanceToTheRange() {
    Calibration.Point inside = new Calibration.Point("s", "ITL", 10, 15, 12, "ms", Calibration.Source.RANGE);
    Calibration.Point below = new Calibration.Point("s", "ITL", 10, 15, 8, "ms", Calibration.Source.RANGE);
    Calibration.Point above = new Calibration.Point("s", "ITL", 10, 15, 18, "ms", Calibration.Source.RANGE);
    assertThat(inside.error()).isZero();
    assertThat(below.error()).isCloseTo(-0.2, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(above.error()).isCloseTo(0.2, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(Calibration.summary(List.of(inside, below, above)).rows()).isZero();
  }

  @Test
  void prefillIsComputeBoundAndDecodeBandwidthBound() {
    StepCostModel h100 = new StepCostModel(GpuSpec.H100, ModelSpec.QWEN3_8B, 1);
    // one decode: about the time to read the weights once at the calibrated bandwidth efficiency (all but the input
    // embedding table, of which a step gathers one row a token)
    ModelSpec m = ModelSpec.QWEN3_8B;
    double streamed = m.weightBytes() - (double) m.vocab() * m.hidden() * 2;
    double weightsSeconds = streamed / (3350e9 * GpuSpec.H100.bandwidthEfficiency());
    assertThat(h100.decodeStepSeconds(1, 100)).isBetween(weightsSeconds, weightsSeconds * 1.15);
    // batching decodes is nearly free while bandwidth-bound
    assertThat(h100.decodeStepSeconds(16, 100)).isLessThan(h100.decodeStepSeconds(1, 100) * 1.2);
    // a long prefill costs about linearly in its tokens (compute-bound)
    double p4k = h100.prefillSeconds(4096, 8192);
    double p8k = h100.prefillSeconds(8192, 8192);
    assertThat(p8k / p4k).isBetween(1.9, 2.3);
    // FP8 weights double the matmul rate on Hopper and Ada, not on Ampere
    assertThat(GpuSpec.H100.matmulFlops(Dtype.FP8)).isEqualTo(2 * GpuSpec.H100.matmulFlops(Dtype.BF16), within());
    assertThat(GpuSpec.A100_80G.matmulFlops(Dtype.FP8)).isEqualTo(GpuSpec.A100_80G.matmulFlops(Dtype.BF16));
  }

  private static org.assertj.core.data.Offset<Double> within() {
    org.assertj.core.data.Offset<Double> o = org.assertj.core.data.Offset.offset(GpuSpec.H100.bf16Flops() * 0.01);
    return o;
  }

  @Test
  void kvBlocksFollowFromMemoryLeftAfterWeights() {
    EngineConfig small = SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B).build().config();
    EngineConfig big = SimEngine.builder().gpu(GpuSpec.H200).model(ModelSpec.QWEN3_8B).build().config();
    EngineConfig tp2 = SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B).tensorParallel(2).build()
        .config();
    // H100: 0.9 x 79.6 GiB - 16.4 GB of weights - activations and runtime ~ 52 GB / 2.25 MiB a block
    assertThat(small.numGpuBlocks()).isBetween(22_000, 27_000);
    assertThat(big.numGpuBlocks()).isGreaterThan(2 * small.numGpuBlocks() - 5_000);
    assertThat(tp2.numGpuBlocks()).isGreaterThan(2 * small.numGpuBlocks());
    assertThat(small.maxNumBatchedTokens()).isEqualTo(8192);
    assertThat(small.maxNumSeqs()).isEqualTo(1024);
    EngineConfig l40s = SimEngine.builder().gpu(GpuSpec.L40S).model(ModelSpec.QWEN3_5_27B_FP8).build().config();
    assertThat(l40s.maxNumBatchedTokens()).isEqualTo(2048);
    assertThat(l40s.maxNumSeqs()).isEqualTo(256);
    assertThat(l40s.kvCapacityTokens()).isBetween(100_000L, 180_000L);
    assertThat(l40s.stateBlocksPerSequence()).isEqualTo(48); // the default's 48 MiB state as a reservation
    EngineConfig align = SimEngine.builder().gpu(GpuSpec.L40S).model(ModelSpec.QWEN3_5_27B_FP8_MAMBA_ALIGN).build()
        .config();
    assertThat(align.blockSize()).isEqualTo(784); // vLLM raises it so a block holds a Mamba state
    assertThat(align.stateBlocksPerSequence()).isEqualTo(3); // one running state in each of three Mamba groups
  }
}
