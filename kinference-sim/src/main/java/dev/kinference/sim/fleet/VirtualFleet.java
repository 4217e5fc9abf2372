package dev.kinference.sim.fleet;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.RequestListener;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.SimRequest;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.Session;
import dev.kinference.sim.workload.TimedWorkload;
import dev.kinference.sim.workload.Workload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A deterministic discrete-event run of N simulated servers, a workload and a router, in virtual time.
 *
 * <p>What the router sees, and when:
 * <ul>
 *   <li>{@link FleetRouter#route} at the moment the client sends; the request reaches its server
 *       {@link Settings#dispatchLatency} later;</li>
 *   <li>each server's metrics, scraped every {@link Settings#scrapeInterval} (each server at its own phase) and
 *       delivered {@link Settings#metricsDelay} after they were taken;</li>
 *   <li>each server's KV event batches, delivered {@link Settings#kvEventDelay} after the step that produced
 *       them;</li>
 *   <li>first tokens and completions as the client receives them.</li>
 * </ul>
 * Ties in time are broken by scheduling order, and every random choice comes from the seed, so a run is
 * reproducible bit for bit. Requests sent during {@link Window#measure} (after {@link Window#warmup}) are measured;
 * after the window no new request is sent, and the run ends when the last one finishes or
 * {@link Window#drainLimit} after the window, whichever comes first (requests still running count as unfinished).
 * Each event costs the same whatever the fleet's size: the servers wait in a heap ordered by their next step's end
 * ({@code NextEventHeap}), and a server is re-keyed only when something touched it.
 *
 * <p>Immutable and thread-safe; each {@link #run} builds fresh servers with empty caches and runs on the calling
 * thread.
 */
public final class VirtualFleet {

  /**
   * The fleet and what the router sees.
   *
   * @param servers number of servers
   * @param engine each server's configuration
   * @param scrapeInterval how often metrics are scraped (llm-d: 50 ms)
   * @param metricsDelay how old metrics are when they reach the router
   * @param kvEventDelay how long KV events take to reach the router
   * @param dispatchLatency from routing to the server's queue (network, HTTP, tokenization in the server)
   * @param seed the run's seed
   */
  public record Settings(int servers, EngineSpec engine, Duration scrapeInterval, Duration metricsDelay,
      Duration kvEventDelay, Duration dispatchLatency, long seed) {

    public Settings {
      Objects.requireNonNull(engine, "engine");
      if (servers < 1 || servers > 4096) {
        throw new IllegalArgumentException("servers must be in [1, 4096]: " + servers);
      }
      if (scrapeInterval.isNegative() || scrapeInterval.isZero()) {
        throw new IllegalArgumentException("scrapeInterval must be positive: " + scrapeInterval);
      }
      if (metricsDelay.isNegative() || kvEventDelay.isNegative() || dispatchLatency.isNegative()) {
        throw new IllegalArgumentException("delays must not be negative");
      }
    }

    /** {@code servers} x {@code engine}, 50 ms scrapes delivered after 5 ms, KV events after 5 ms, 5 ms dispatch. */
    public static Settings of(int servers, EngineSpec engine, long seed) {
      return new Settings(servers, engine, Duration.ofMillis(50), Duration.ofMillis(5), Duration.ofMillis(5),
          Duration.ofMillis(5), seed);
    }

    public Settings withSeed(long newSeed) {
      return new Settings(servers, engine, scrapeInterval, metricsDelay, kvEventDelay, dispatchLatency, newSeed);
    }

    public Settings withKvEventDelay(Duration delay) {
      return new Settings(servers, engine, scrapeInterval, metricsDelay, delay, dispatchLatency, seed);
    }

    public Settings withScrape(Duration interval, Duration delay) {
      return new Settings(servers, engine, interval, delay, kvEventDelay, dispatchLatency, seed);
    }
  }

  /**
   * The measurement window.
   *
   * @param warmup sent before this are not measured (caches and queues fill)
   * @param measure requests sent during this are measured
   * @param drainLimit how long after the window the run waits for measured requests to finish
   */
  public record Window(Duration warmup, Duration measure, Duration drainLimit) {
    public Window {
      if (warmup.isNegative() || measure.isNegative() || measure.isZero() || drainLimit.isNegative()) {
        throw new IllegalArgumentException("invalid window");
      }
    }

    public long measureStartNanos() {
      return warmup.toNanos();
    }

    public long measureEndNanos() {
      return warmup.toNanos() + measure.toNanos();
    }
  }

  /**
   * What a run did.
   *
   * @param router the router's name
   * @param load the load pattern
   * @param simulatedNanos virtual time covered
   * @param wallNanos real time taken
   * @param sent requests sent
   * @param measured requests measured (sent within the window)
   * @param dispatched requests sent to each server
   * @param finalMetrics each server's metrics at the end
   */
  @SuppressWarnings("ArrayRecordComponent") // copied in and out
  public record RunStats(String router, LoadPattern load, long simulatedNanos, long wallNanos, long sent,
      long measured, long[] dispatched, List<EngineMetrics> finalMetrics) {

    public RunStats {
      dispatched = dispatched.clone();
      finalMetrics = List.copyOf(finalMetrics);
    }

    @Override
    public long[] dispatched() {
      return dispatched.clone();
    }

    /** Engine steps over all servers. */
    public long steps() {
      return finalMetrics.stream().mapToLong(EngineMetrics::steps).sum();
    }
  }

  private final Settings settings;

  private VirtualFleet(Settings settings) {
    this.settings = settings;
  }

  public static VirtualFleet of(Settings settings) {
    return new VirtualFleet(Objects.requireNonNull(settings, "settings"));
  }

  public Settings settings() {
    return settings;
  }

  /**
   * Runs {@code workload} under {@code load} through {@code router} over fresh servers.
   *
   * @throws IllegalArgumentException if the load is a replay and the workload is not a {@link TimedWorkload}
   */
  public RunStats run(Workload workload, LoadPattern load, Window window, FleetRouter router, RunObserver observer) {
    if (load instanceof LoadPattern.Replay && !(workload instanceof TimedWorkload)) {
      throw new IllegalArgumentException("a replay needs a timed workload (a trace), not " + workload.name());
    }
    return new Run(workload, load, window, router, observer).execute();
  }

  /** Scheduled action; ordered by time, then by scheduling order. */
  private record Event(long time, long seq, Runnable action) implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(time, o.time);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  private final class Run implements FleetView {
    private final Workload workload;
    private final LoadPattern load;
    private final FleetRouter router;
    private final RunObserver observer;
    private final long measureStart;
    /** Final except for a ladder, whose end is known only when its last stage has sent. */
    private long measureEnd;
    private long deadline;
    private final long drainLimit;
    /** The ladder's stage now sending, its sends so far and its requests in flight (a ladder only). */
    private int stage = -1;
    private int sentInStage;
    private int stageInFlight;
    private final SimEngine[] engines;
    private final List<Endpoint> endpoints;
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final SplittableRandom workloadRandom;
    private final SplittableRandom arrivalRandom;
    private final Map<String, InFlight> inFlight = new HashMap<>();
    private final long[] dispatched;
    private final NextEventHeap clocks;
    /** Servers touched since the heap last saw them: their next event may have moved. */
    private final int[] touched;
    private final boolean[] isTouched;
    private int touchedCount;
    private long now;
    private long seq;
    private long sessions;
    private long pendingClientEvents;
    private long sent;
    private long measured;
    private long nextProgress;

    Run(Workload workload, LoadPattern load, Window window, FleetRouter router, RunObserver observer) {
      this.workload = workload;
      this.load = load;
      this.router = router;
      this.observer = observer;
      SplittableRandom master = new SplittableRandom(settings.seed());
      this.workloadRandom = master.split();
      this.arrivalRandom = master.split();
      SplittableRandom phases = master.split();
      long start = window.measureStartNanos();
      long end = window.measureEndNanos();
      this.drainLimit = window.drainLimit().toNanos();
      if (load instanceof LoadPattern.Ladder) {
        // every stage is measured, the warm-up too, as inference-perf's summary pools them; the end is set when
        // the last stage has sent
        start = 0;
        end = Long.MAX_VALUE;
      }
      if (load instanceof LoadPattern.Replay replay) {
        long traceEnd = (long) (((TimedWorkload) workload).durationNanos() / replay.speedup()) + 1;
        end = Math.max(end, traceEnd);
      }
      this.measureStart = start;
      this.measureEnd = end;
      this.deadline = end == Long.MAX_VALUE ? Long.MAX_VALUE : end + drainLimit;
      int n = settings.servers();
      this.engines = new SimEngine[n];
      this.dispatched = new long[n];
      this.clocks = new NextEventHeap(n);
      this.touched = new int[n];
      this.isTouched = new boolean[n];
      List<Endpoint> eps = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        int server = i;
        engines[i] = settings.engine().toBuilder().hashSeed(settings.seed() * 31 + i)
            .kvEventListener(batch -> schedule(batch.timestampNanos() + settings.kvEventDelay().toNanos(),
                () -> router.onKvEvents(server, batch, now)))
            .build();
        eps.add(Endpoint.of("sim-" + i, "http://sim-" + i + ".invalid:8000",
            settings.engine().servedModelName()));
      }
      this.endpoints = List.copyOf(eps);
      long interval = settings.scrapeInterval().toNanos();
      for (int i = 0; i < n; i++) {
        int server = i;
        schedule(phases.nextLong(interval), () -> scrape(server));
      }
    }

    @Override
    public List<Endpoint> endpoints() {
      return endpoints;
    }

    @Override
    public String model() {
      return settings.engine().servedModelName();
    }

    /** The engine, to change or read: a router's changes (an oracle advancing the clock) reach the heap too. */
    @Override
    public SimEngine engine(int i) {
      return touch(i);
    }

    /** {@code engines[server]}, marked for re-keying before the next event is chosen. */
    private SimEngine touch(int server) {
      if (!isTouched[server]) {
        isTouched[server] = true;
        touched[touchedCount++] = server;
      }
      return engines[server];
    }

    private void rekeyTouched() {
      for (int k = 0; k < touchedCount; k++) {
        int server = touched[k];
        isTouched[server] = false;
        clocks.update(server, engines[server].nextEventNanos());
      }
      touchedCount = 0;
    }

    @Override
    public long nowNanos() {
      return now;
    }

    RunStats execute() {
      long wallStart = System.nanoTime();
      router.start(this);
      startLoad();
      while (true) {
        long tq = queue.isEmpty() ? Long.MAX_VALUE : queue.peek().time();
        rekeyTouched();
        int ei = clocks.first();
        long te = clocks.firstTime();
        long t = Math.min(tq, te);
        if (t == Long.MAX_VALUE || t > deadline) {
          if (t != Long.MAX_VALUE) {
            now = Math.max(now, deadline); // the run was cut at the drain limit; what is unfinished waited until it
          }
          break;
        }
        if (now >= measureEnd && inFlight.isEmpty() && pendingClientEvents == 0) {
          break;
        }
        now = Math.max(now, t);
        if (tq <= te) {
          queue.poll().action().run();
        } else {
          touch(ei).advanceTo(te);
        }
        if (now >= nextProgress) {
          long total = progressTotal();
          observer.onProgress(now, total);
          nextProgress = now + Math.max(1, total / 200);
        }
      }
      for (InFlight f : inFlight.values()) {
        if (f.measured) {
          observer.onRequest(new CompletedRequest(f.request, f.server, f.sentNanos, f.firstTokenNanos, -1, null,
              f.maxGapNanos, now));
        }
      }
      inFlight.clear();
      List<EngineMetrics> metrics = new ArrayList<>();
      for (SimEngine e : engines) {
        metrics.add(e.metrics());
      }
      observer.onProgress(progressTotal(), progressTotal());
      return new RunStats(router.name(), load, now, System.nanoTime() - wallStart, sent, measured, dispatched,
          metrics);
    }

    /** The run's expected length for progress: the deadline, or a ladder's send time thrice (it drains). */
    private long progressTotal() {
      if (deadline == Long.MAX_VALUE && load instanceof LoadPattern.Ladder ladder) {
        return Math.max(now + 1, 3 * ladder.sendTime().toNanos());
      }
      return Math.max(1, deadline);
    }

    private void schedule(long time, Runnable action) {
      queue.add(new Event(Math.max(time, now), seq++, action));
    }

    private void scheduleClient(long time, Runnable action) {
      pendingClientEvents++;
      schedule(time, () -> {
        pendingClientEvents--;
        action.run();
      });
    }

    private void startLoad() {
      switch (load) {
        case LoadPattern.ClosedLoop closed -> {
          for (int c = 0; c < closed.concurrency(); c++) {
            // staggered by a millisecond so that clients do not arrive in one instant
            scheduleClient(c * 1_000_000L, this::startClosedLoopSession);
          }
        }
        case LoadPattern.Poisson poisson -> scheduleClient(nextPoissonGap(poisson), () -> poissonArrival(poisson));
        case LoadPattern.Replay replay -> scheduleNextTimed(replay);
        case LoadPattern.Ladder ladder -> startStage(ladder, 0);
      }
    }

    private void startStage(LoadPattern.Ladder ladder, int index) {
      stage = index;
      sentInStage = 0;
      stageInFlight = 0;
      observer.onStageStart(index, now);
      LoadPattern.Ladder.Stage s = ladder.stages().get(index);
      if (!ladder.drainBetweenStages() && index + 1 < ladder.stages().size()) {
        scheduleClient(now + s.duration().toNanos(), () -> startStage(ladder, index + 1));
      }
      scheduleClient(nextPoissonGap(s.ratePerSecond()), () -> ladderArrival(ladder, index));
    }

    private void ladderArrival(LoadPattern.Ladder ladder, int index) {
      if (stage != index) {
        return; // without drain, the next stage started when this one's time was up
      }
      LoadPattern.Ladder.Stage s = ladder.stages().get(index);
      issueNext(workload.newSession(workloadRandom, sessions++), false);
      if (++sentInStage < s.sessions()) {
        scheduleClient(nextPoissonGap(s.ratePerSecond()), () -> ladderArrival(ladder, index));
        return;
      }
      boolean last = index + 1 == ladder.stages().size();
      if (last) {
        measureEnd = now;
        deadline = now + drainLimit;
      } else if (ladder.drainBetweenStages()) {
        // inference-perf waits for the stage's requests without a limit; ours waits at most the drain limit
        schedule(now + drainLimit, () -> endStage(ladder, index));
        if (stageInFlight == 0) {
          endStage(ladder, index);
        }
      }
    }

    /** Moves a drained ladder past stage {@code index}, once: when its last request ends or its drain limit passes. */
    private void endStage(LoadPattern.Ladder ladder, int index) {
      if (stage != index) {
        return;
      }
      stage = -2 - index; // between stages: no stage is sending
      scheduleClient(now + ladder.interval().toNanos(), () -> startStage(ladder, index + 1));
    }

    private void onLadderRequestEnd(int requestStage) {
      if (requestStage == stage) {
        stageInFlight--;
        if (stageInFlight == 0 && load instanceof LoadPattern.Ladder ladder && ladder.drainBetweenStages()
            && stage + 1 < ladder.stages().size() && sentInStage == ladder.stages().get(stage).sessions()) {
          endStage(ladder, stage);
        }
      }
    }

    private long nextPoissonGap(LoadPattern.Poisson p) {
      return nextPoissonGap(p.ratePerSecond());
    }

    private long nextPoissonGap(double ratePerSecond) {
      double u = arrivalRandom.nextDouble();
      return now + (long) (-Math.log(1 - u) / ratePerSecond * 1e9);
    }

    private void poissonArrival(LoadPattern.Poisson p) {
      if (now >= measureEnd) {
        return;
      }
      issueNext(workload.newSession(workloadRandom, sessions++), false);
      scheduleClient(nextPoissonGap(p), () -> poissonArrival(p));
    }

    private void scheduleNextTimed(LoadPattern.Replay replay) {
      TimedWorkload.Timed timed = ((TimedWorkload) workload).nextTimedSession(workloadRandom);
      if (timed == null) {
        return;
      }
      scheduleClient((long) (timed.offsetNanos() / replay.speedup()), () -> {
        issueNext(timed.session(), false);
        scheduleNextTimed(replay);
      });
    }

    private void startClosedLoopSession() {
      if (now >= measureEnd) {
        return;
      }
      issueNext(workload.newSession(workloadRandom, sessions++), true);
    }

    private void issueNext(Session session, boolean closedLoop) {
      ClientRequest request = session.nextRequest();
      if (request == null) {
        if (closedLoop) {
          startClosedLoopSession();
        }
        return;
      }
      dispatch(request, session, closedLoop);
    }

    private void dispatch(ClientRequest request, Session session, boolean closedLoop) {
      FleetRouter.Decision decision = router.route(request, now);
      int server = decision.server();
      if (server == FleetRouter.REJECTED) {
        reject(request, closedLoop);
        return;
      }
      if (server < 0 || server >= engines.length) {
        throw new IllegalStateException(router.name() + " chose server " + server + " of " + engines.length);
      }
      boolean isMeasured = now >= measureStart && now < measureEnd;
      InFlight f = new InFlight(request, session, decision, server, now, isMeasured, closedLoop,
          Math.max(-1, stage));
      if (stage >= 0) {
        stageInFlight++;
      }
      inFlight.put(request.id(), f);
      sent++;
      dispatched[server]++;
      if (isMeasured) {
        measured++;
      }
      long latency = settings.dispatchLatency().toNanos();
      if (latency == 0) {
        submit(f);
      } else {
        schedule(now + latency, () -> submit(f));
      }
    }

    /** A request the router turned away: it ends at its send, and its session sends nothing more. */
    private void reject(ClientRequest request, boolean closedLoop) {
      if (closedLoop) {
        throw new IllegalStateException(router.name() + " turned a request away under a closed-loop load, whose "
            + "client would resend at once");
      }
      sent++;
      if (now >= measureStart && now < measureEnd) {
        measured++;
        observer.onRequest(CompletedRequest.rejected(request, now));
      }
    }

    private void submit(InFlight f) {
      SimEngine engine = touch(f.server);
      engine.advanceTo(now);
      ClientRequest r = f.request;
      engine.submit(new SimRequest(r.id(), r.promptTokens(), r.maxTokens(), r.scriptedOutput(), r.request().lora(),
          r.request().cacheSalt()), f);
    }

    private void scrape(int server) {
      if (now > deadline) {
        return;
      }
      SimEngine engine = touch(server);
      engine.advanceTo(now);
      EngineMetrics m = engine.metrics();
      long taken = now;
      schedule(now + settings.metricsDelay().toNanos(), () -> router.onMetrics(server, m, taken, now));
      schedule(now + settings.scrapeInterval().toNanos(), () -> scrape(server));
    }

    /** A request between send and end; also its engine listener. */
    private final class InFlight implements RequestListener {
      final ClientRequest request;
      final Session session;
      final FleetRouter.Decision decision;
      final int server;
      final long sentNanos;
      final boolean measured;
      final boolean closedLoop;
      /** The ladder stage that sent it, or -1. */
      final int stage;
      long firstTokenNanos = -1;
      long lastTokenNanos = -1;
      long maxGapNanos;

      InFlight(ClientRequest request, Session session, FleetRouter.Decision decision, int server, long sentNanos,
          boolean measured, boolean closedLoop, int stage) {
        this.request = request;
        this.session = session;
        this.decision = decision;
        this.server = server;
        this.sentNanos = sentNanos;
        this.measured = measured;
        this.closedLoop = closedLoop;
        this.stage = stage;
      }

      @Override
      public void onFirstToken(String requestId, long nanos) {
        now = nanos;
        firstTokenNanos = nanos;
        decision.onFirstToken(nanos);
      }

      @Override
      public void onToken(String requestId, long nanos, int index, int tokenId) {
        if (index > 0) {
          long gap = nanos - lastTokenNanos;
          maxGapNanos = Math.max(maxGapNanos, gap);
          if (measured) {
            observer.onTokenGap(request, gap);
          }
        }
        lastTokenNanos = nanos;
      }

      @Override
      public void onFinished(RequestOutcome outcome) {
        now = Math.max(now, outcome.finishNanos());
        inFlight.remove(request.id());
        decision.onFinished(outcome, now);
        if (stage >= 0) {
          onLadderRequestEnd(stage);
        }
        if (measured) {
          observer.onRequest(new CompletedRequest(request, server, sentNanos, firstTokenNanos, now, outcome,
              maxGapNanos));
        }
        long next = now + session.thinkTimeNanos(outcome);
        if (next < measureEnd) {
          scheduleClient(next, () -> issueNext(session, closedLoop));
        }
      }
    }
  }
}
