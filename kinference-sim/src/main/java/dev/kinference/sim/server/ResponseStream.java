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

  /** {@code count} more tokens. */
  record Tokens(int count) implements Event {}

  /** The last token is out; {@code cachedPromptTokens} prompt tokens were served from the prefix cache. */
  record Finished(int cachedPromptTokens) implements Event {}

  record Failed(String reason) implements Event {}

  private static final Tokens ONE = new Tokens(1);

  private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final boolean mergeTokens;
  private volatile @Nullable Runnable onAbort;

  /** @param mergeTokens whether tokens queued while the reader was busy come out as one event */
  ResponseStream(boolean mergeTokens) {
    this.mergeTokens = mergeTokens;
  }

  @Override
  public void token() {
    events.add(ONE);
  }

  @Override
  public void finished(int cachedPromptTokens) {
    events.add(new Finished(cachedPromptTokens));
  }

  @Override
  public void failed(String reason) {
    events.add(new Failed(reason));
  }

  /**
   * The next event, waiting for it. Tokens that arrived while the reader was busy are merged into one event, as
   * vLLM merges the deltas of a slow consumer into one chunk.
   */
  Event next() throws InterruptedException {
    Event e = events.take();
    if (mergeTokens && e instanceof Tokens t) {
      int n = t.count();
      while (events.peek() instanceof Tokens more) {
        events.poll();
        n += more.count();
      }
      return n == 1 ? ONE : new Tokens(n);
    }
    return e;
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
