package dev.kinference.sim.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The targets for our router, checked on a benchmark result. Each check compares pooled figures over a
 * workload's sweep: median / p95 TTFT over every measured request of the sweep, peak goodput (the best load point),
 * and prefix hit rate over all measured prompt tokens.
 */
public final class Targets {

  /**
   * One target.
   *
   * @param name what is checked
   * @param measured the measured value, as text
   * @param target the target, as text
   * @param met whether it is met
   */
  public record Check(String name, String measured, String target, boolean met) {}

  /** Our goodput on the agentic workload against every comparison router's, at least. */
  static final double AGENTIC_GOODPUT_FACTOR = 1.2;

  private Targets() {}

  /**
   * The targets, for the routers present: goodput against every comparison router (not our own router with the
   * approximate index); on the Kinference-paper scenario only, whose targets they
   * are, also the ratios to random and the unique-prompt p95 TTFT against least-request's.
   */
  public static List<Check> evaluate(BenchmarkResult result) {
    List<Check> checks = new ArrayList<>();
    List<String> routers = result.routers();
    String ours = Routers.OURS;
    if (!routers.contains(ours)) {
      return checks;
    }
    // The issue sets the ratios to random and the unique-prompt tail for Kinference's experiment only: on llm-d's,
    // random's best point comes before its collapse and the ratio of peaks says little (docs/BENCHMARKS.md).
    boolean kinferencePaper = result.scenario().name().equals(Scenarios.KINFERENCE_PAPER);
    for (String w : result.workloads()) {
      boolean shared = w.startsWith("shared-prefix");
      boolean multi = w.startsWith("multi-turn");
      boolean unique = w.startsWith("unique");
      if (kinferencePaper && routers.contains(Routers.RANDOM) && (shared || multi)) {
        double reduction = 1 - result.pooledTtftSeconds(w, ours, 50) / result.pooledTtftSeconds(w, Routers.RANDOM, 50);
        double wanted = shared ? 0.95 : 0.65;
        checks.add(new Check(w + ": median TTFT vs random", pct(reduction) + " lower", ">= " + pct(wanted) + " lower",
            reduction >= wanted));
        double ratio = ratio(result.peakGoodput(w, ours), result.peakGoodput(w, Routers.RANDOM));
        double wantedRatio = shared ? 10 : 4;
        checks.add(new Check(w + ": peak goodput vs random", times(ratio), ">= " + times(wantedRatio),
            ratio >= wantedRatio));
      }
      if (kinferencePaper && unique && routers.contains(Routers.LEAST_REQUEST)) {
        double o = result.pooledTtftSeconds(w, ours, 95);
        double lr = result.pooledTtftSeconds(w, Routers.LEAST_REQUEST, 95);
        checks.add(new Check(w + ": p95 TTFT vs least-request", secs(o) + " vs " + secs(lr), "no worse",
            o <= lr * 1.0001));
      }
      for (String other : routers) {
        // The comparison routers: ours with the approximate index is one of ours, and the oracle, which reads
        // the servers' true caches, is checked through its hit rate below.
        if (other.equals(ours) || other.equals(Routers.OURS_APPROX) || other.equals(Routers.ORACLE)) {
          continue;
        }
        double g = result.peakGoodput(w, ours);
        double og = result.peakGoodput(w, other);
        // the issue asks 1.2x the best comparison router's goodput on agentic sessions, parity elsewhere
        double factor = w.equals(BenchmarkPlan.AGENTIC) ? AGENTIC_GOODPUT_FACTOR : 1;
        checks.add(new Check(w + ": peak goodput vs " + other, versus(g, og) + " req/min",
            factor == 1 ? "at least equal" : "at least " + times(factor), g >= og * factor));
      }
      // No hit rate against the oracle (until 2026-12-01 ">= 90% of the oracle's"): the oracle now weighs queues
      // against cached prefixes and gives up hits for sooner first tokens, so its hit rate bounds nothing.
    }
    return checks;
  }

  static double ratio(double a, double b) {
    if (b == 0) {
      return a == 0 ? 1 : Double.POSITIVE_INFINITY;
    }
    return a / b;
  }

  static String pct(double v) {
    return String.format(Locale.ROOT, "%.1f%%", 100 * v);
  }

  static String times(double v) {
    return Double.isInfinite(v) ? "inf (the other met the SLO never)" : String.format(Locale.ROOT, "%.2fx", v);
  }

  static String secs(double v) {
    return String.format(Locale.ROOT, "%.3f s", v);
  }

  /**
   * {@code "a vs b"} with one decimal, or with as many more (up to three) as it takes to tell two different values
   * apart: a missed "4.4 vs 4.4" reads as a contradiction when it is 4.40 against 4.43.
   */
  static String versus(double a, double b) {
    String x = "";
    String y = "";
    for (int decimals = 1; decimals <= 3; decimals++) {
      x = String.format(Locale.ROOT, "%." + decimals + "f", a);
      y = String.format(Locale.ROOT, "%." + decimals + "f", b);
      if (!x.equals(y) || a == b) {
        break;
      }
    }
    return x + " vs " + y;
  }
}
