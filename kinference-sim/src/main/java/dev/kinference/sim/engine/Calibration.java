package dev.kinference.sim.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Reruns published vLLM measurements (from {@code vllm-performance-facts.md}) on the engine model and compares. Each
 * experiment drives real {@link SimEngine}s through the same request pattern (batch, closed loop or offline flood),
 * so the comparison covers the scheduler and the KV pool, not only the roofline. Stateless; runs take a few
 * seconds in all.
 */
public final class Calibration {

  /**
   * One comparison.
   *
   * @param setup GPU, model and workload
   * @param metric what is compared
   * @param published the published value
   * @param simulated the engine model's value
   * @param unit the unit of both
   */
  public record Point(String setup, String metric, double published, double simulated, String unit) {
    /** Simulated relative to published: +0.10 means 10% higher. */
    public double error() {
      return simulated / published - 1;
    }
  }

  /** Llama-3.1-8B with FP8 weights (W8A8), as MLPerf runs it. */
  static final ModelSpec LLAMA_3_1_8B_FP8 = new ModelSpec("Llama-3.1-8B-FP8", 32, 32, 4096, 32, 8, 128, 14_336,
      128_256, 8.03e9, 8.03e9, Dtype.FP8, 8.03e9 + 128_256 * 4096 * 2.0, Dtype.FP8, 131_072, 0);

  private Calibration() {}

  /** Every comparison. */
  public static List<Point> points() {
    List<Point> out = latencyPoints();
    out.addAll(throughputPoints());
    return out;
  }

  /** The single-request and small-batch latency comparisons (fast: a few hundred requests in all). */
  public static List<Point> latencyPoints() {
    List<Point> out = new ArrayList<>();
    // 32 in / 128 out, batch 8: end-to-end latency of the batch
    out.add(new Point("H200, Llama-3.1-8B BF16, batch 8 x (32 in / 128 out)", "batch latency", 833,
        batchMillis(GpuSpec.H200, ModelSpec.LLAMA_3_1_8B, 1, 8, 32, 128), "ms"));
    out.add(new Point("H100, Llama-3.1-8B BF16, batch 8 x (32 in / 128 out)", "batch latency", 998,
        batchMillis(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 8, 32, 128), "ms"));
    out.add(new Point("A100-80G, Llama-3.1-8B BF16, batch 8 x (32 in / 128 out)", "batch latency", 1585,
        batchMillis(GpuSpec.A100_80G, ModelSpec.LLAMA_3_1_8B, 1, 8, 32, 128), "ms"));
    out.add(new Point("4x H200, Llama-3-70B BF16, batch 8 x (32 in / 128 out)", "batch latency", 2078,
        batchMillis(GpuSpec.H200, ModelSpec.LLAMA_3_1_70B, 4, 8, 32, 128), "ms"));
    out.add(new Point("4x H100, Llama-3-70B BF16, batch 8 x (32 in / 128 out)", "batch latency", 2444,
        batchMillis(GpuSpec.H100, ModelSpec.LLAMA_3_1_70B, 4, 8, 32, 128), "ms"));
    // Qwen3-8B on H100, ShareGPT-like (233 in / 221 out), closed loop
    double[] tpot = {7.28, 7.37, 7.38, 7.71};
    int[] conc = {1, 2, 4, 8};
    for (int i = 0; i < conc.length; i++) {
      out.add(new Point("H100, Qwen3-8B BF16, concurrency " + conc[i] + " x (233 in / 221 out)", "TPOT", tpot[i],
          closedLoop(GpuSpec.H100, ModelSpec.QWEN3_8B, 1, conc[i], 233, 221)[1], "ms"));
    }
    // Llama-3.1-8B on H100, short chat: concurrency 1 and 4 (TPOT)
    out.add(new Point("H100, Llama-3.1-8B BF16, concurrency 1 (short chat)", "TPOT", 6.48,
        closedLoop(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 1, 200, 200)[1], "ms"));
    out.add(new Point("H100, Llama-3.1-8B BF16, concurrency 4 (short chat)", "TPOT", 6.59,
        closedLoop(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 4, 200, 200)[1], "ms"));
    return out;
  }

  /** The large-batch throughput comparisons (thousands of requests). */
  public static List<Point> throughputPoints() {
    List<Point> out = new ArrayList<>();
    // ShareGPT 200 prompts, maximum throughput: the makespan depends on the longest answers, whose distribution is
    // not published with the figure; log-normal lengths (sigma 0.9) and fixed mean lengths bracket it
    out.add(new Point("H100, Llama-3.1-8B BF16, 200 prompts of exactly 233 in / 221 out", "throughput", 19.5,
        offline(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 200, 233, 221, 0)[0], "req/s"));
    out.add(new Point("H200, Llama-3.1-8B BF16, 200 ShareGPT prompts at once", "throughput", 22.6,
        offline(GpuSpec.H200, ModelSpec.LLAMA_3_1_8B, 1, 200, 233, 221, 0, true)[0], "req/s"));
    out.add(new Point("H100, Llama-3.1-8B BF16, 200 ShareGPT prompts at once", "throughput", 19.5,
        offline(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 200, 233, 221, 0, true)[0], "req/s"));
    out.add(new Point("A100-80G, Llama-3.1-8B BF16, 200 ShareGPT prompts at once", "throughput", 11.1,
        offline(GpuSpec.A100_80G, ModelSpec.LLAMA_3_1_8B, 1, 200, 233, 221, 0, true)[0], "req/s"));
    out.add(new Point("4x H200, Llama-3.1-70B BF16, 200 ShareGPT prompts at once", "throughput", 9.84,
        offline(GpuSpec.H200, ModelSpec.LLAMA_3_1_70B, 4, 200, 233, 221, 0, true)[0], "req/s"));
    out.add(new Point("4x H100, Llama-3.1-70B BF16, 200 ShareGPT prompts at once", "throughput", 8.86,
        offline(GpuSpec.H100, ModelSpec.LLAMA_3_1_70B, 4, 200, 233, 221, 0, true)[0], "req/s"));
    // vLLM v0.6.0 blog: 5,000 ShareGPT prompts, max-num-seqs 256
    out.add(new Point("H100, Llama-3.1-8B BF16, 5,000 ShareGPT prompts, max_num_seqs 256", "output throughput",
        8088, offline(GpuSpec.H100, ModelSpec.LLAMA_3_1_8B, 1, 5000, 233, 221, 256, true)[1], "tok/s"));
    out.add(new Point("4x H100, Llama-3.1-70B BF16, 5,000 ShareGPT prompts, max_num_seqs 256", "output throughput",
        3543, offline(GpuSpec.H100, ModelSpec.LLAMA_3_1_70B, 4, 5000, 233, 221, 256, true)[1], "tok/s"));
    // Qwen3-32B on one H100: 1,000 prompts of 2K in / 100 out at once
    out.add(new Point("H100, Qwen3-32B BF16, 1,000 prompts at once (2K in / 100 out)", "total throughput", 3195,
        offline(GpuSpec.H100, ModelSpec.QWEN3_32B, 1, 1000, 2048, 100, 0)[2], "tok/s"));
    // MLPerf v5.1 Llama-3.1-8B offline (CNN/DailyMail: about 870 in / 120 out), FP8
    out.add(new Point("L40S, Llama-3.1-8B FP8, MLPerf offline (~870 in / ~120 out)", "output throughput", 1642,
        offline(GpuSpec.L40S, LLAMA_3_1_8B_FP8, 1, 3000, 870, 120, 0)[1], "tok/s"));
    out.add(new Point("H100, Llama-3.1-8B FP8, MLPerf offline (~870 in / ~120 out)", "output throughput", 5777,
        offline(GpuSpec.H100, LLAMA_3_1_8B_FP8, 1, 6000, 870, 120, 0)[1], "tok/s"));
    return out;
  }

  /** The comparison as a table. */
  public static String table(List<Point> points) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-78s %-18s %10s %10s %7s%n", "setup",
        "metric", "published", "simulated", "error"));
    for (Point p : points) {
      sb.append(String.format(Locale.ROOT, "%-78s %-18s %10.2f %10.2f %+6.0f%%  %s%n", p.setup(), p.metric(),
          p.published(), p.simulated(), 100 * p.error(), p.unit()));
    }
    return sb.toString();
  }

  private static SimEngine engine(GpuSpec gpu, ModelSpec model, int tp, int maxNumSeqs) {
    SimEngineBuilder b = SimEngine.builder().gpu(gpu).model(model).tensorParallel(tp);
    if (maxNumSeqs > 0) {
      b.maxNumSeqs(maxNumSeqs);
    }
    return b.build();
  }

  /** A ShareGPT-like length: log-normal with this mean and a sigma of 0.9, within [4, cap]. */
  static int shareGptLength(SplittableRandom r, double mean, int cap) {
    double sigma = 0.9;
    double mu = Math.log(mean) - sigma * sigma / 2;
    double g = Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble());
    return (int) Math.max(4, Math.min(cap, Math.round(Math.exp(mu + sigma * g))));
  }

  private static int[] prompt(SplittableRandom r, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = r.nextInt(1 << 30);
    }
    return t;
  }

  private static void drain(SimEngine e) {
    while (e.nextEventNanos() != Long.MAX_VALUE) {
      e.advanceTo(e.nextEventNanos());
    }
  }

  /** Milliseconds until the last of {@code batch} simultaneous requests finishes. */
  static double batchMillis(GpuSpec gpu, ModelSpec model, int tp, int batch, int in, int out) {
    SimEngine e = engine(gpu, model, tp, 0);
    SplittableRandom r = new SplittableRandom(1);
    for (int i = 0; i < batch; i++) {
      e.submit(new SimRequest("b" + i, prompt(r, in), out, null, null, null), RequestListener.NONE);
    }
    drain(e);
    return e.now() / 1e6;
  }

  /** A closed loop of {@code clients} clients, 20 requests each: mean TTFT and mean TPOT in milliseconds. */
  static double[] closedLoop(GpuSpec gpu, ModelSpec model, int tp, int clients, int in, int out) {
    SimEngine e = engine(gpu, model, tp, 0);
    SplittableRandom r = new SplittableRandom(2);
    double[] sums = new double[3];
    int[] left = new int[clients];
    java.util.Arrays.fill(left, 20);
    List<Integer> due = new ArrayList<>();
    List<Integer> finished = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      due.add(c);
    }
    int seq = 0;
    while (true) {
      for (int c : due) {
        if (left[c]-- > 0) {
          e.submit(new SimRequest("c" + seq++, prompt(r, in), out, null, null, null), new RequestListener() {
            @Override
            public void onFinished(RequestOutcome o) {
              sums[0] += o.ttftNanos() / 1e6;
              sums[1] += (o.finishNanos() - o.firstTokenNanos()) / 1e6 / Math.max(1, o.completionTokens() - 1);
              sums[2]++;
              finished.add(c);
            }
          });
        }
      }
      due.clear();
      if (e.nextEventNanos() == Long.MAX_VALUE) {
        break;
      }
      e.advanceTo(e.nextEventNanos());
      due.addAll(finished);
      finished.clear();
    }
    return new double[] {sums[0] / sums[2], sums[1] / sums[2]};
  }

  /**
   * {@code n} requests submitted at once: requests per second, output tokens per second, total (prompt + output)
   * tokens per second.
   */
  static double[] offline(GpuSpec gpu, ModelSpec model, int tp, int n, int in, int out, int maxNumSeqs) {
    return offline(gpu, model, tp, n, in, out, maxNumSeqs, false);
  }

  /** Like {@link #offline(GpuSpec, ModelSpec, int, int, int, int, int)}; ShareGPT-like lengths of these means. */
  static double[] offline(GpuSpec gpu, ModelSpec model, int tp, int n, int in, int out, int maxNumSeqs,
      boolean shareGpt) {
    SimEngine e = engine(gpu, model, tp, maxNumSeqs);
    SplittableRandom r = new SplittableRandom(3);
    long inTokens = 0;
    long outTokens = 0;
    for (int i = 0; i < n; i++) {
      int pin = shareGpt ? shareGptLength(r, in, 1024) : in;
      int pout = shareGpt ? shareGptLength(r, out, 2048) : out;
      inTokens += pin;
      outTokens += pout;
      e.submit(new SimRequest("o" + i, prompt(r, pin), pout, null, null, null), RequestListener.NONE);
    }
    drain(e);
    double seconds = e.now() / 1e9;
    return new double[] {n / seconds, outTokens / seconds, (inTokens + outTokens) / seconds};
  }
}
