package dev.kinference.sim.workload;

import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/** A workload whose sessions start at given times (a trace). */
public interface TimedWorkload extends Workload {

  /** A session due at some offset from the run's start. */
  record Timed(long offsetNanos, Session session) {}

  /** The next session in time order, or null when the trace is exhausted. */
  @Nullable Timed nextTimedSession(RandomGenerator random);

  /** The offset of the last session's start. */
  long durationNanos();
}
