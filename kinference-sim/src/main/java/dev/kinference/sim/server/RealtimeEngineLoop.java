package dev.kinference.sim.server;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.RequestListener;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.SimRequest;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives a {@link SimEngine} in wall-clock time: the engine's clock is the wall clock (times the time scale), and
 * the loop sleeps until the engine's next event (the end of the step in flight), then advances the engine to the
 * current time, which delivers the step's tokens and KV events. Requests are submitted at their arrival time and
 * join the next step, as in vLLM's engine core loop. If the loop falls behind, the engine still ends each step at its
 * modelled time (outputs carry exact times) and only the delivery is late.
 *
 * <p>Thread-safety: one loop thread owns the engine (which is not thread-safe); {@link #submit}, {@link #abort},
 * {@link #metrics}, {@link #resetPrefixCache} and {@link #kill} may be called from any thread and are handed over
 * through a queue. Sinks are called on the loop thread and must not block.
 */
final class RealtimeEngineLoop implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RealtimeEngineLoop.class);
  private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** Receives a request's progress, on the loop thread. */
  interface Sink {
    /** One more output token. */
    void token();

    /** The request ended normally; {@code cachedPromptTokens} were served from the prefix cache. */
    void finished(int cachedPromptTokens);

    /** The request did not complete (engine stopped, request rejected, or aborted). */
    void failed(String reason);
  }

  private final SimEngine engine;
  private final double timeScale;
  private final long startWallNanos;
  private final long startEngineNanos;
  private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();
  private final Map<String, Sink> sinks = new HashMap<>();
  private final Map<String, String> waitingLoras = new HashMap<>();
  private final Map<String, String> runningLoras = new HashMap<>();
  private final Thread thread;
  private volatile boolean stopped;
  private volatile String stopReason = "engine stopped";
  private volatile EngineMetrics lastMetrics;

  /**
   * @param engine a fresh engine whose clock starts at {@code engine.now()}
   * @param timeScale simulated seconds per wall-clock second (1 = real time)
   */
  RealtimeEngineLoop(SimEngine engine, double timeScale, String name) {
    this.engine = engine;
    this.timeScale = timeScale;
    this.startWallNanos = System.nanoTime();
    this.startEngineNanos = engine.now();
    this.lastMetrics = engine.metrics();
    this.thread = new Thread(this::run, "sim-engine-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  /** The engine's time now, in its clock's nanoseconds. */
  long engineNow() {
    return startEngineNanos + (long) ((System.nanoTime() - startWallNanos) * timeScale);
  }

  /** Queues a request at its arrival time. */
  void submit(SimRequest request, Sink sink) {
    if (!offer(() -> {
      engine.advanceTo(Math.max(engine.now(), engineNow()));
      try {
        engine.submit(request, new Listener(sink));
      } catch (IllegalArgumentException e) {
        sink.failed(String.valueOf(e.getMessage()));
        return;
      }
      sinks.put(request.id(), sink);
      if (request.lora() != null) {
        waitingLoras.put(request.id(), request.lora());
      }
    })) {
      sink.failed(stopReason);
    }
  }

  /** Stops a request whose client went away (its blocks stay cached). */
  void abort(String id) {
    offer(() -> {
      engine.advanceTo(Math.max(engine.now(), engineNow()));
      engine.abort(id);
    });
  }

  /**
   * The engine's metrics now; answered on the loop thread, or the last known ones if the loop is stopped or does not
   * answer within a second.
   */
  EngineMetrics metrics() {
    CompletableFuture<EngineMetrics> f = new CompletableFuture<>();
    if (offer(() -> {
      engine.advanceTo(Math.max(engine.now(), engineNow()));
      EngineMetrics m = engine.metrics();
      lastMetrics = m;
      f.complete(m);
    })) {
      try {
        return f.get(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        // fall through to the last snapshot
      }
    }
    return lastMetrics;
  }

  /**
   * LoRA adapters of running requests (those past their first token) or of waiting ones, for
   * {@code vllm:lora_requests_info}.
   */
  Set<String> loraAdapters(boolean running) {
    CompletableFuture<Set<String>> f = new CompletableFuture<>();
    if (offer(() -> f.complete(Set.copyOf((running ? runningLoras : waitingLoras).values())))) {
      try {
        return f.get(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        // fall through
      }
    }
    return Set.of();
  }

  /** vLLM's {@code POST /reset_prefix_cache}; completes with false while requests hold blocks. */
  CompletableFuture<Boolean> resetPrefixCache() {
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    if (!offer(() -> {
      engine.advanceTo(Math.max(engine.now(), engineNow()));
      done.complete(engine.resetPrefixCache());
    })) {
      done.complete(false);
    }
    return done;
  }

  /** Stops the loop; every unfinished request fails with {@code reason}. Returns once the loop thread ended. */
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
    try {
      while (!stopped) {
        Runnable task;
        while ((task = inbox.poll()) != null) {
          task.run();
        }
        long next = engine.nextEventNanos();
        long now = engineNow();
        if (next <= now) {
          engine.advanceTo(Math.max(engine.now(), now));
          continue;
        }
        long waitNanos = next == Long.MAX_VALUE ? IDLE_PARK_NANOS : (long) ((next - now) / timeScale);
        if (inbox.isEmpty()) {
          LockSupport.parkNanos(Math.max(1, Math.min(waitNanos, IDLE_PARK_NANOS)));
        }
      }
    } catch (RuntimeException | Error e) {
      log.error("Simulated engine failed", e);
      stopReason = "engine failed: " + e;
      stopped = true;
    }
    inbox.clear();
    for (Sink s : sinks.values()) {
      s.failed(stopReason);
    }
    sinks.clear();
  }

  /** Forwards the engine's callbacks to a sink, keeping the LoRA bookkeeping. */
  private final class Listener implements RequestListener {
    private final Sink sink;

    Listener(Sink sink) {
      this.sink = sink;
    }

    @Override
    public void onFirstToken(String requestId, long nanos) {
      String lora = waitingLoras.remove(requestId);
      if (lora != null) {
        runningLoras.put(requestId, lora);
      }
    }

    @Override
    public void onToken(String requestId, long nanos, int index, int tokenId) {
      sink.token();
    }

    @Override
    public void onFinished(RequestOutcome outcome) {
      sinks.remove(outcome.requestId());
      waitingLoras.remove(outcome.requestId());
      runningLoras.remove(outcome.requestId());
      switch (outcome.reason()) {
        case STOP, LENGTH -> sink.finished(outcome.cachedTokens());
        case ABORT -> sink.failed("aborted");
      }
    }
  }
}
