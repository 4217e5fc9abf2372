package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.StepCostModel;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * Perfect, instant knowledge used greedily: reads each engine's true prefix cache and queue at the instant of routing
 * (no scrape interval, no event delay, no estimation) and sends the request to the server where its first token is
 * predicted soonest: the rest of the step in flight, then the prefill still queued there plus this request's uncached
 * tokens (a prefix cached elsewhere counted twice, for the cache room a copy takes), in chunks of the step
 * budget left by the running decodes, each step timed by the engine's own roofline. A cached prefix counts through
 * the tokens it saves, so the request follows its prefix until that server's queue costs more than prefilling the
 * prefix elsewhere. Near-ties (within 1%) go to the server with the longer cached prefix, then at random. Requests
 * it has sent that have not yet reached their server (the dispatch latency) count as that server's queued work: the
 * engines cannot show them, and without them a burst of requests sent at one instant (a trace with whole-second
 * timestamps) all went to the server that looked idlest.
 *
 * <p>Until 2026-12-01 it sent every request to a server with the longest cached prefix and used the prediction only
 * among those: when every request shares a first block (a trace's common system prompt), that herded the whole
 * load onto the few servers that held it first (six of 16 servers got nothing) and made it the worst router there.
 * Until 2026-12-01 evening it did not count the requests still on their way to a server (above).
 */
final class OracleRouter implements FleetRouter {

  private static final double ASSUMED_CONTEXT = 2048;

  /** How long a sent request counts as on its way if its server never shows it (it finished before it was seen). */
  private static final long IN_TRANSIT_EXPIRY_NANOS = 1_000_000_000L;

  /** A request sent to a server, with the prompt tokens it will add there, until the server's engine holds it. */
  private record InTransit(String id, long sentNanos, long tokens) {}

  private final SplittableRandom random;
  private @Nullable FleetView fleet;
  private List<ArrayDeque<InTransit>> inTransit = List.of();

  OracleRouter(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public String name() {
    return "oracle";
  }

  @Override
  public void start(FleetView view) {
    this.fleet = view;
    List<ArrayDeque<InTransit>> queues = new ArrayList<>(view.size());
    for (int i = 0; i < view.size(); i++) {
      queues.add(new ArrayDeque<>());
    }
    this.inTransit = queues;
  }

  /** Prompt tokens sent to {@code engine} that it does not hold yet (dispatch is FIFO per server). */
  private long tokensInTransit(int server, SimEngine engine, long nowNanos) {
    ArrayDeque<InTransit> queue = inTransit.get(server);
    while (!queue.isEmpty() && (engine.holds(queue.getFirst().id())
        || nowNanos - queue.getFirst().sentNanos() > IN_TRANSIT_EXPIRY_NANOS)) {
      queue.pollFirst();
    }
    long tokens = 0;
    for (InTransit t : queue) {
      if (!engine.holds(t.id())) {
        tokens += t.tokens();
      }
    }
    return tokens;
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    FleetView view = java.util.Objects.requireNonNull(fleet);
    int n = view.size();
    double[] predicted = new double[n];
    int[] cached = new int[n];
    int mostCached = 0;
    for (int i = 0; i < n; i++) {
      SimEngine engine = view.engine(i);
      engine.advanceTo(Math.max(engine.now(), nowNanos));
      cached[i] = engine.cachedPrefixTokens(request.promptTokens(), request.request().lora(),
          request.request().cacheSalt());
      mostCached = Math.max(mostCached, cached[i]);
    }
    for (int i = 0; i < n; i++) {
      SimEngine engine = view.engine(i);
      // a prefix copied from another server's cache is charged twice: this request prefills it, and the copy takes
      // cache room that the fleet already spends on it elsewhere (without this, overload spread every prefix)
      long copied = (long) mostCached - cached[i];
      long work = engine.pendingPrefillTokens() + tokensInTransit(i, engine, nowNanos)
          + request.promptTokens().length - cached[i] + copied;
      // the step in flight finishes before this request's first chunk can run
      double inFlight = engine.isBusy() ? Math.max(0, engine.nextEventNanos() - engine.now()) / 1e9 : 0;
      predicted[i] = inFlight + prefillSeconds(engine, work, engine.runningCount());
    }
    double best = Double.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      best = Math.min(best, predicted[i]);
    }
    int longestAmongBest = -1;
    for (int i = 0; i < n; i++) {
      if (predicted[i] <= best * 1.01 + 1e-9) {
        longestAmongBest = Math.max(longestAmongBest, cached[i]);
      }
    }
    int chosen = 0;
    int ties = 0;
    for (int i = 0; i < n; i++) {
      if (predicted[i] <= best * 1.01 + 1e-9 && cached[i] == longestAmongBest && random.nextInt(++ties) == 0) {
        chosen = i;
      }
    }
    int server = chosen;
    inTransit.get(server).addLast(new InTransit(request.id(), nowNanos,
        (long) request.promptTokens().length - cached[server]));
    return () -> server;
  }

  /** Seconds to prefill {@code work} tokens beside {@code running} decodes on {@code engine}. */
  static double prefillSeconds(SimEngine engine, long work, int running) {
    EngineConfig c = engine.config();
    StepCostModel cost = engine.costModel();
    int decodes = Math.min(running, c.maxNumSeqs());
    int chunk = Math.max(1, c.maxNumBatchedTokens() - decodes);
    double seconds = 0;
    long left = Math.max(1, work);
    while (left > 0) {
      int n = (int) Math.min(chunk, left);
      seconds += cost.stepSeconds(decodes + 1, (long) n + decodes, (long) (decodes * ASSUMED_CONTEXT) + n,
          decodes * ASSUMED_CONTEXT + n * (n + 1) / 2.0);
      left -= n;
    }
    return seconds;
  }
}
