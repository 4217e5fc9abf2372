package dev.kinference.sim.workload;

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
}
