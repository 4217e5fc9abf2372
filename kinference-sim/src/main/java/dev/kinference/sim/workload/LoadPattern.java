package dev.kinference.sim.workload;

import java.time.Duration;
import java.util.List;

/** How sessions arrive. */
public sealed interface LoadPattern {

  /** A label for reports: {@code c=8}, {@code 2.5/s}, {@code trace}. */
  String label();

  /** The value plotted on a sweep's x axis. */
  double x();

  /**
   * Closed loop: {@code concurrency} clients, each starting a new session as soon as its previous one ends (a
   * session's turns are separated by its think time).
   */
  record ClosedLoop(int concurrency) implements LoadPattern {
    public ClosedLoop {
      if (concurrency < 1) {
        throw new IllegalArgumentException("concurrency must be positive: " + concurrency);
      }
    }

    @Override
    public String label() {
      return "c=" + concurrency;
    }

    @Override
    public double x() {
      return concurrency;
    }
  }

  /** Open loop: sessions start at Poisson arrivals of {@code ratePerSecond}, whatever the servers' state. */
  record Poisson(double ratePerSecond) implements LoadPattern {
    public Poisson {
      if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
        throw new IllegalArgumentException("ratePerSecond must be positive: " + ratePerSecond);
      }
    }

    @Override
    public String label() {
      return ratePerSecond + "/s";
    }

    @Override
    public double x() {
      return ratePerSecond;
    }
  }

  /** Replay: sessions start at the times a {@link TimedWorkload} gives (a trace), scaled by {@code speedup}. */
  record Replay(double speedup) implements LoadPattern {
    public Replay {
      if (!(speedup > 0) || Double.isInfinite(speedup)) {
        throw new IllegalArgumentException("speedup must be positive: " + speedup);
      }
    }

    @Override
    public String label() {
      return speedup == 1 ? "trace" : "trace x" + speedup;
    }

    @Override
    public double x() {
      return speedup;
    }
  }

  /**
   * Staged open loop, as inference-perf's {@code load.stages} runs it: stage after stage, each sending
   * {@code floor(rate x duration)} sessions at Poisson arrivals of its rate. With {@code drainBetweenStages} (what
   * inference-perf does: its {@code run_stage} waits until every request of the stage has finished) the next stage
   * starts {@code interval} after the last request of the stage ended; without, it starts when the previous stage's
   * duration is over, whatever is still running. Caches are never reset between stages.
   *
   * @param stages the stages in order, the first one usually a warm-up
   * @param interval the pause between a drained stage and the next (inference-perf's {@code load.interval}, 1 s by
   *     default, plus the second it leaves a stage's first send to fill its queue)
   * @param drainBetweenStages whether each stage waits for its requests to finish before the next starts
   */
  record Ladder(List<Stage> stages, Duration interval, boolean drainBetweenStages) implements LoadPattern {

    /** One stage: {@code ratePerSecond} for {@code duration}. */
    public record Stage(double ratePerSecond, Duration duration) {
      public Stage {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
          throw new IllegalArgumentException("a stage's rate must be positive: " + ratePerSecond);
        }
        if (duration.isNegative() || duration.isZero()) {
          throw new IllegalArgumentException("a stage's duration must be positive: " + duration);
        }
      }

      /** The sessions it sends: {@code floor(rate x seconds)}, as inference-perf counts them. */
      public int sessions() {
        return (int) Math.floor(ratePerSecond * duration.toNanos() / 1e9 + 1e-9);
      }
    }

    public Ladder {
      stages = List.copyOf(stages);
      if (stages.isEmpty()) {
        throw new IllegalArgumentException("a ladder needs at least one stage");
      }
      if (interval.isNegative()) {
        throw new IllegalArgumentException("interval must not be negative: " + interval);
      }
    }

    /**
     * The load of llm-d's published precise-prefix benchmark (workload profile "X-70R-6kSys" in
     * {@code llm-d/llm-d guides/precise-prefix-cache-aware}): a 50 s warm-up at 15 QPS (one full set of its 750
     * prompts), then 3, 10 and 15 QPS for 20 s, 20 / 22 / 25 / 30 / 35 QPS for 38 / 34 / 30 / 25 / 21 s (one set
     * each) and 40 to 60 QPS for 38 to 25 s (two sets each): 17 stages.
     */
    public static Ladder llmdPublished(boolean drainBetweenStages) {
      double[][] rateSeconds = {{15, 50}, {3, 20}, {10, 20}, {15, 20}, {20, 38}, {22, 34}, {25, 30}, {30, 25},
          {35, 21}, {40, 38}, {43, 36}, {46, 33}, {49, 30}, {52, 29}, {55, 27}, {57, 26}, {60, 25}};
      List<Stage> stages = java.util.Arrays.stream(rateSeconds)
          .map(rs -> new Stage(rs[0], Duration.ofSeconds((long) rs[1]))).toList();
      return new Ladder(stages, Duration.ofSeconds(2), drainBetweenStages);
    }

    /** Sessions over every stage. */
    public long sessions() {
      return stages.stream().mapToLong(Stage::sessions).sum();
    }

    /** The stages' durations added up: the whole ladder's length without drain or intervals. */
    public Duration sendTime() {
      return stages.stream().map(Stage::duration).reduce(Duration.ZERO, Duration::plus);
    }

    @Override
    public String label() {
      return stages.size() + " stages" + (drainBetweenStages ? "" : " no drain");
    }

    @Override
    public double x() {
      return (double) sessions() / (sendTime().toNanos() / 1e9);
    }
  }
}
