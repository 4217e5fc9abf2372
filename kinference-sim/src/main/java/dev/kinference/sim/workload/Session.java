package dev.kinference.sim.workload;

import dev.kinference.sim.engine.RequestOutcome;
import org.jspecify.annotations.Nullable;

/**
 * One client's sequence of requests: a single request, or a conversation whose turns follow each other. Not
 * thread-safe; driven by one fleet run.
 */
public interface Session {

  /** The next request, or null when the session is over. Called once at start and after each completion. */
  @Nullable ClientRequest nextRequest();

  /** Pause before the next request after {@code outcome} (a user reading and typing). */
  default long thinkTimeNanos(RequestOutcome outcome) {
    return 0;
  }
}
