package dev.kinference.k8s;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Breaks a deadlock inside the fabric8 mock API server (8.0.0) that made the WebSocket tests fail at random on a
 * loaded machine with "Unable to close MockWebServer", or stall for 30 s mid-test.
 *
 * <p>The mock sends watch events from a per-watch executor thread, which queues the write on the Vert.x event loop
 * and then waits up to 30 s for it to complete ({@code VertxMockWebSocket.awaitWrite}). When the client closes
 * that WebSocket meanwhile, the event loop runs {@code WatchEventsListener.onFailure}/{@code onClosed}, which
 * shuts the executor down and waits up to a minute for it: the event loop waits for the sender, the sender for the
 * event loop. Whenever the event loop is seen waiting there, this interrupts every thread waiting in
 * {@code awaitWrite}. That loses nothing: the writes are already queued and go out in order once the loop is free;
 * only the waiting ends (the executor clears the interrupt before its next task). If a later fabric8 version names
 * these methods differently, the breaker simply never fires. Thread-safe; one per mock server.
 */
final class MockWatchDeadlockBreaker implements AutoCloseable {

  private static final String LISTENER = "io.fabric8.kubernetes.client.server.mock.WatchEventsListener";
  private static final String WEB_SOCKET = "io.fabric8.mockwebserver.vertx.VertxMockWebSocket";

  private final Thread thread;
  private final AtomicInteger broken = new AtomicInteger();
  private volatile boolean closed;

  MockWatchDeadlockBreaker() {
    thread = Thread.ofPlatform().daemon().name("mock-watch-deadlock-breaker").start(this::run);
  }

  /** How many waiting senders were interrupted so far. */
  int interrupted() {
    return broken.get();
  }

  private void run() {
    while (!closed) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
      broken.addAndGet(breakOnce());
    }
  }

  /** Interrupts the senders if the event loop waits for them; returns how many. */
  static int breakOnce() {
    Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
    boolean loopWaitsForSenders = all.values().stream().anyMatch(MockWatchDeadlockBreaker::waitsForSenders);
    if (!loopWaitsForSenders) {
      return 0;
    }
    int n = 0;
    for (Map.Entry<Thread, StackTraceElement[]> e : all.entrySet()) {
      if (waitsForWrite(e.getValue())) {
        e.getKey().interrupt();
        n++;
      }
    }
    return n;
  }

  /** A closing listener waiting for its executor: {@code onFailure/onClosed -> awaitTermination}. */
  private static boolean waitsForSenders(StackTraceElement[] stack) {
    boolean awaiting = false;
    for (StackTraceElement f : stack) {
      if (f.getMethodName().equals("awaitTermination")) {
        awaiting = true;
      } else if (awaiting && f.getClassName().equals(LISTENER)
          && (f.getMethodName().equals("onFailure") || f.getMethodName().equals("onClosed"))) {
        return true;
      }
    }
    return false;
  }

  private static boolean waitsForWrite(StackTraceElement[] stack) {
    for (StackTraceElement f : stack) {
      if (f.getClassName().equals(WEB_SOCKET) && f.getMethodName().equals("awaitWrite")) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
