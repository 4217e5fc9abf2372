package dev.kinference.sim.engine;

/**
 * Receives one request's progress from a {@link SimEngine}, on the thread that drives the engine, with times in
 * the engine's clock. For every request: {@link #onFirstToken} once (unless it ends before), {@link #onToken} for
 * each output token in order, then {@link #onFinished} exactly once.
 *
 * <p>Listeners may call {@link SimEngine#submit} and {@link SimEngine#abort}; they must not call
 * {@link SimEngine#advanceTo} or {@link SimEngine#restart}.
 */
public interface RequestListener {

  /** A listener that ignores everything. */
  RequestListener NONE = new RequestListener() {};

  /** The first output token was produced at {@code nanos}. */
  default void onFirstToken(String requestId, long nanos) {}

  /** Output token number {@code index} (from 0) with id {@code tokenId} was produced at {@code nanos}. */
  default void onToken(String requestId, long nanos, int index, int tokenId) {}

  /** The request ended. */
  default void onFinished(RequestOutcome outcome) {}
}
