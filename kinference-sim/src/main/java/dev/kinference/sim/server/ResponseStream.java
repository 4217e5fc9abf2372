package dev.kinference.sim.server;

import java.util.concurrent.LinkedBlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * One request's progress, handed from the engine loop to the HTTP thread that answers it.
 *
 * <p>Thread-safe: the loop thread (or the instant responder) adds, one HTTP thread takes.
 */
final class ResponseStream implements RealtimeEngineLoop.Sink {

  /** What happened to the request. */
  sealed interface Event permits Tokens, Finished, Failed {}

  /** {@code count} more tokens; {@code cachedPromptTokens} prompt tokens were served from the prefix cache. */
  record Tokens(int count, int cachedPromptTokens) implements Event {}

  record Finished() implements Event {}

  record Failed(String reason) implements Event {}

  private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private volatile @Nullable Runnable onAbort;

  @Override
  public void tokens(int newTokens, int cachedPromptTokens) {
    events.add(new Tokens(newTokens, cachedPromptTokens));
  }

  @Override
  public void finished() {
    events.add(new Finished());
  }

  @Override
  public void failed(String reason) {
    events.add(new Failed(reason));
  }

  /** The next event, waiting for it. */
  Event next() throws InterruptedException {
    return events.take();
  }

  /** What to do if the client goes away before the end. */
  void onAbort(Runnable action) {
    this.onAbort = action;
  }

  void abort() {
    Runnable a = onAbort;
    if (a != null) {
      a.run();
    }
  }
}
