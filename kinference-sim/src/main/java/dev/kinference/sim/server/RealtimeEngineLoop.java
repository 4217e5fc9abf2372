package dev.kinference.sim.server;

import dev.kinference.cache.KvEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link SteppedEngine} in wall-clock time: each step's results are delivered once the step's modelled
 * duration (divided by the time scale) has passed, as a GPU would finish it. Requests arriving during a step join
 * at the next one, as in vLLM's engine core loop.
 *
 * <p>Thread-safety: one loop thread owns the engine; {@link #submit}, {@link #abort}, {@link #resetPrefixCache},
 * {@link #kill} and {@link #close} may be called from any thread and are handed to it through a queue. Sinks are
 * called on the loop thread and must not block.
 */
final class RealtimeEngineLoop implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RealtimeEngineLoop.class);
  /** If the loop falls behind by less than this (simulated seconds), the next step starts when the last ended. */
  private static final double CATCH_UP_SECONDS = 0.05;

  /** Receives a request's progress, on the loop thread. */
  interface Sink {
    /** {@code newTokens} more tokens were generated; {@code cachedPromptTokens} is fixed once known. */
    void tokens(int newTokens, int cachedPromptTokens);

    /** The last token was delivered. */
    void finished();

    /** The engine stopped (killed or closed) before the request finished. */
    void failed(String reason);
  }

  private static final class Tracked {
    final SteppedEngine.Request request;
    final String finishReason;
    final Sink sink;
    final double arrival;
    double scheduledAt = Double.NaN;
    double firstTokenAt = Double.NaN;
    double lastTokenAt = Double.NaN;
    int generated;

    Tracked(SteppedEngine.Request request, String finishReason, Sink sink, double arrival) {
      this.request = request;
      this.finishReason = finishReason;
      this.sink = sink;
      this.arrival = arrival;
    }
  }

  private final SteppedEngine engine;
  private final double timeScale;
  private final VllmMetrics metrics;
  private final Consumer<List<KvEvent>> eventSink;
  private final LinkedBlockingQueue<Runnable> inbox = new LinkedBlockingQueue<>();
  private final Map<Long, Tracked> tracked = new HashMap<>();
  private final long startNanos = System.nanoTime();
  private final Thread thread;
  private volatile boolean stopped;
  private volatile String stopReason = "engine stopped";

  /**
   * @param timeScale simulated seconds per wall-clock second (1 = real time)
   * @param eventSink receives each step's KV events (never an empty list), on the loop thread
   */
  RealtimeEngineLoop(SteppedEngine engine, double timeScale, VllmMetrics metrics,
      Consumer<List<KvEvent>> eventSink, String name) {
    this.engine = engine;
    this.timeScale = timeScale;
    this.metrics = metrics;
    this.eventSink = eventSink;
    this.thread = new Thread(this::run, "sim-engine-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  /** Simulated seconds since the loop started. */
  double simNow() {
    return (System.nanoTime() - startNanos) * timeScale / 1e9;
  }

  /** Queues a request; {@code finishReason} ("stop" or "length") is reported when its last token is out. */
  void submit(SteppedEngine.Request request, String finishReason, Sink sink) {
    double arrival = simNow();
    if (!offer(() -> {
      tracked.put(request.id(), new Tracked(request, finishReason, sink, arrival));
      engine.add(request);
    })) {
      sink.failed(stopReason);
    }
  }

  /** Stops a request whose client went away. */
  void abort(long id) {
    offer(() -> {
      Tracked t = tracked.remove(id);
      if (t != null) {
        engine.abort(id);
        metrics.finished("abort", simNow() - t.arrival, queued(t), 0, 0, t.request.promptTokens().length,
            t.generated);
      }
    });
  }

  /** Drops unused cached blocks and publishes the resulting events; completes on the loop thread. */
  CompletableFuture<Void> resetPrefixCache() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (!offer(() -> {
      List<KvEvent> events = engine.resetPrefixCache();
      if (!events.isEmpty()) {
        eventSink.accept(events);
      }
      done.complete(null);
    })) {
      done.completeExceptionally(new IllegalStateException(stopReason));
    }
    return done;
  }

  /** Stops the engine; every unfinished request fails with {@code reason}. */
  void kill(String reason) {
    stopReason = reason;
    stopped = true;
    LockSupport.unpark(thread);
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    kill("server closed");
  }

  private boolean offer(Runnable task) {
    if (stopped) {
      return false;
    }
    inbox.add(task);
    LockSupport.unpark(thread);
    return true;
  }

  private void run() {
    double lastEnd = Double.NEGATIVE_INFINITY;
    try {
      while (!stopped) {
        drainInbox();
        if (!engine.hasWork()) {
          metrics.scheduler(engine.numRunning(), engine.numWaiting(), engine.kvCacheUsage());
          Runnable next = inbox.poll(50, TimeUnit.MILLISECONDS);
          if (next != null) {
            next.run();
          }
          lastEnd = Double.NEGATIVE_INFINITY;
          continue;
        }
        double now = simNow();
        double start = now - lastEnd < CATCH_UP_SECONDS ? Math.max(lastEnd, 0) : now;
        SteppedEngine.Step step = engine.step(start);
        double end = start + step.seconds();
        sleepUntil(end);
        if (stopped) {
          break;
        }
        deliver(step, start, end);
        lastEnd = end;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException | Error e) {
      log.error("Simulated engine failed", e);
      stopReason = "engine failed: " + e;
      stopped = true;
    }
    inbox.clear();
    for (Tracked t : tracked.values()) {
      t.sink.failed(stopReason);
    }
    tracked.clear();
  }

  private void drainInbox() {
    Runnable task;
    while ((task = inbox.poll()) != null) {
      task.run();
    }
  }

  private void sleepUntil(double simSeconds) {
    while (!stopped) {
      double remaining = (simSeconds - simNow()) / timeScale;
      if (remaining <= 0) {
        return;
      }
      LockSupport.parkNanos((long) (remaining * 1e9));
    }
  }

  private void deliver(SteppedEngine.Step step, double start, double end) {
    for (long id : step.scheduledFirstTime()) {
      Tracked t = tracked.get(id);
      if (t != null && Double.isNaN(t.scheduledAt)) {
        t.scheduledAt = start;
      }
    }
    List<Tracked> done = new ArrayList<>();
    for (SteppedEngine.Progress p : step.progress()) {
      Tracked t = tracked.get(p.id());
      if (t == null) {
        continue;
      }
      if (Double.isNaN(t.scheduledAt)) {
        t.scheduledAt = start;
      }
      if (p.newTokens() > 0) {
        if (Double.isNaN(t.firstTokenAt)) {
          t.firstTokenAt = end;
          metrics.firstToken(end - t.arrival);
        } else {
          metrics.interToken(end - t.lastTokenAt);
        }
        t.lastTokenAt = end;
        t.generated += p.newTokens();
        t.sink.tokens(p.newTokens(), p.cachedPromptTokens());
      }
      if (p.finished()) {
        done.add(t);
      }
    }
    if (!step.events().isEmpty()) {
      eventSink.accept(step.events());
    }
    metrics.prefixCache(step.prefixQueryTokens(), step.prefixHitTokens());
    metrics.iteration(step.promptTokens(), step.generationTokens(), step.preemptions());
    for (Tracked t : done) {
      tracked.remove(t.request.id());
      double firstToken = Double.isNaN(t.firstTokenAt) ? end : t.firstTokenAt;
      double scheduled = Double.isNaN(t.scheduledAt) ? t.arrival : t.scheduledAt;
      metrics.finished(t.finishReason, end - t.arrival, scheduled - t.arrival, firstToken - scheduled,
          end - firstToken, t.request.promptTokens().length, t.generated);
      t.sink.finished();
    }
    metrics.scheduler(engine.numRunning(), engine.numWaiting(), engine.kvCacheUsage());
    metrics.loraAdapters(engine.runningLoras(), engine.waitingLoras(), System.currentTimeMillis() / 1000.0);
  }

  private static double queued(Tracked t) {
    return Double.isNaN(t.scheduledAt) ? 0 : t.scheduledAt - t.arrival;
  }
}
