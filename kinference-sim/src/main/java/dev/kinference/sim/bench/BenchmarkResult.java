package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineConfig;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.HdrHistogram.Histogram;

/**
 * Every run of a benchmark, with aggregations over a workload's sweep. Immutable after construction (the run
 * results are only read).
 *
 * @param scenario what was run
 * @param engine each server's resolved configuration
 * @param runs one result per (workload, load point, router)
 * @param wallNanos real time the benchmark took
 */
public record BenchmarkResult(Benchmark.Scenario scenario, EngineConfig engine, List<RunResult> runs,
    long wallNanos) {

  public BenchmarkResult {
    runs = List.copyOf(runs);
  }

  /** Workload names, in scenario order. */
  public List<String> workloads() {
    Set<String> names = new LinkedHashSet<>();
    runs.forEach(r -> names.add(r.workload()));
    return new ArrayList<>(names);
  }

  /** Router names, in scenario order. */
  public List<String> routers() {
    Set<String> names = new LinkedHashSet<>();
    runs.forEach(r -> names.add(r.router()));
    return new ArrayList<>(names);
  }

  /** The runs of one workload and router, by load. */
  public List<RunResult> sweep(String workload, String router) {
    return runs.stream().filter(r -> r.workload().equals(workload) && r.router().equals(router))
        .sorted(Comparator.comparingDouble(r -> r.load().x())).toList();
  }

  /** The run at one load point. */
  public Optional<RunResult> run(String workload, String router, double x) {
    return sweep(workload, router).stream().filter(r -> r.load().x() == x).findFirst();
  }

  /** Measured requests over the sweep. */
  public long pooledRequests(String workload, String router) {
    return sweep(workload, router).stream().mapToLong(RunResult::requests).sum();
  }

  /** Measured requests of the sweep that finished within their runs. */
  public long pooledFinished(String workload, String router) {
    return sweep(workload, router).stream().mapToLong(RunResult::finished).sum();
  }

  /**
   * TTFT over every measured request of the sweep, microseconds; a request that got no first token counts with the
   * time it waited until its run ended.
   */
  public Histogram pooledTtft(String workload, String router) {
    Histogram h = new Histogram(24L * 3600 * 1_000_000, 3);
    sweep(workload, router).forEach(r -> h.add(r.ttftMicros()));
    return h;
  }

  /** Pooled TTFT percentile over the sweep, seconds. */
  public double pooledTtftSeconds(String workload, String router, double percentile) {
    Histogram h = pooledTtft(workload, router);
    return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
  }

  /** The best goodput (requests per minute within the SLO) over the sweep. */
  public double peakGoodput(String workload, String router) {
    return sweep(workload, router).stream().mapToDouble(RunResult::goodputPerMinute).max().orElse(0);
  }

  /** Cached over prompt tokens over the whole sweep. */
  public double pooledHitRate(String workload, String router) {
    long cached = 0;
    long prompt = 0;
    for (RunResult r : sweep(workload, router)) {
      cached += r.cachedTokens();
      prompt += r.promptTokens();
    }
    return prompt == 0 ? 0 : (double) cached / prompt;
  }

  /** The highest load at which the SLO held for at least 90% of requests, or 0 if none. */
  public double maxLoadMeetingSlo(String workload, String router) {
    double best = 0;
    for (RunResult r : sweep(workload, router)) {
      if (r.requests() > 0 && r.metSlo() >= 0.9 * r.requests()) {
        best = Math.max(best, r.load().x());
      }
    }
    return best;
  }
}
