package dev.kinference.sim.engine;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One GPU model as the roofline sees it: memory, HBM bandwidth, dense tensor throughput per data type, the
 * interconnect used by tensor parallelism, and the efficiency factors calibrated against published vLLM figures
 * (see {@code kinference-sim/README.md}).
 *
 * <p>Datasheet figures are dense (not sparse) tensor throughput. {@code fp8Flops} is 0 on GPUs without FP8 tensor
 * cores (A100): FP8 weights then run weight-only (dequantised to BF16 for the matrix multiply).
 *
 * @param name display name
 * @param memoryBytes device memory as the driver reports it (for example 46,068 MiB on an L40S)
 * @param bandwidthBytesPerSecond peak memory bandwidth
 * @param bf16Flops peak dense BF16 tensor FLOP/s
 * @param fp8Flops peak dense FP8 tensor FLOP/s, or 0 if unsupported
 * @param linkBytesPerSecond per-direction bandwidth between GPUs of one server (NVLink, or PCIe without it)
 * @param allReduceLatencySeconds fixed cost of one all-reduce between tensor-parallel ranks
 * @param bandwidthEfficiency fraction of peak bandwidth a decode step achieves end to end (calibrated)
 * @param computeEfficiencyScale multiplies the matrix-multiply efficiency curve of {@link StepCostModel} (calibrated;
 *     1 for H100, where the curve was measured)
 * @param stepOverheadSeconds fixed CPU cost of one engine step: scheduling, sampling, output processing (calibrated)
 */
public record GpuSpec(String name, long memoryBytes, double bandwidthBytesPerSecond, double bf16Flops,
    double fp8Flops, double linkBytesPerSecond, double allReduceLatencySeconds, double bandwidthEfficiency,
    double computeEfficiencyScale, double stepOverheadSeconds) {

  private static final long MIB = 1L << 20;

  /** NVIDIA L40S (PCIe, no NVLink): 48 GB GDDR6, 864 GB/s, 362 / 733 dense TFLOPS BF16 / FP8. */
  public static final GpuSpec L40S = new GpuSpec("L40S", 46_068 * MIB, 864e9, 362e12, 733e12, 25e9, 30e-6,
      0.70, 0.70, 0.00065);

  /** NVIDIA A100 80GB SXM: 2,039 GB/s, 312 dense BF16 TFLOPS, no FP8. */
  public static final GpuSpec A100_80G = new GpuSpec("A100-80G", 81_920 * MIB, 2_039e9, 312e12, 0, 300e9, 10e-6,
      0.668, 1.0, 0.00065);

  /** NVIDIA H100 SXM: 80 GB HBM3, 3,350 GB/s, 989 / 1,979 dense TFLOPS BF16 / FP8. */
  public static final GpuSpec H100 = new GpuSpec("H100", 81_559 * MIB, 3_350e9, 989e12, 1_979e12, 450e9, 8e-6,
      0.668, 1.0, 0.00065);

  /** NVIDIA H200 SXM: 141 GB HBM3e, 4,800 GB/s, same compute as H100. */
  public static final GpuSpec H200 = new GpuSpec("H200", 143_771 * MIB, 4_800e9, 989e12, 1_979e12, 450e9, 8e-6,
      0.62, 1.0, 0.00065);

  public GpuSpec {
    Objects.requireNonNull(name, "name");
    if (memoryBytes <= 0 || !(bandwidthBytesPerSecond > 0) || !(bf16Flops > 0) || fp8Flops < 0
        || !(linkBytesPerSecond > 0) || allReduceLatencySeconds < 0 || stepOverheadSeconds < 0) {
      throw new IllegalArgumentException("invalid GPU figures for " + name);
    }
    if (!(bandwidthEfficiency > 0 && bandwidthEfficiency <= 1) || !(computeEfficiencyScale > 0
        && computeEfficiencyScale <= 1.3)) {
      throw new IllegalArgumentException("efficiencies out of range for " + name);
    }
  }

  /** The built-in GPUs. */
  public static List<GpuSpec> builtIns() {
    return List.of(L40S, A100_80G, H100, H200);
  }

  /** The built-in GPU with this name (case-insensitive, '-' and '_' ignored). */
  public static GpuSpec named(String name) {
    String wanted = normalise(name);
    for (GpuSpec g : builtIns()) {
      if (normalise(g.name()).equals(wanted)) {
        return g;
      }
    }
    throw new IllegalArgumentException("unknown GPU '" + name + "'; known: "
        + builtIns().stream().map(GpuSpec::name).toList());
  }

  /** Peak dense FLOP/s of the matrix multiplies for weights of {@code weights} type. */
  public double matmulFlops(Dtype weights) {
    return weights == Dtype.FP8 && fp8Flops > 0 ? fp8Flops : bf16Flops;
  }

  static String normalise(String s) {
    return s.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "").replace(" ", "");
  }
}
