package dev.kinference.sim.bench;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Several independent instances of one router behind a Kubernetes Service: each request goes to a uniformly random
 * replica, as kube-proxy spreads connections. Each replica keeps its own view (in-flight counts, approximate index,
 * session table) and sees only the requests it routed; every replica receives every scrape and every KV-event
 * batch, as each scrapes the servers and subscribes to their events itself. Called on the fleet's one thread.
 *
 * <p>Replicas that share their in-flight accounts (only ours, {@link KinferenceRouter}) publish, at each scrape of a
 * server, the uncached prompt tokens they sent there that await a first token, and each takes the sum of the others'
 * ({@link EndpointState#updatePeerPendingPrefillTokens}): as gateway replicas would through a shared state store,
 * no fresher than their scrapes.
 */
final class ReplicatedRouter implements FleetRouter {

  private final FleetRouter[] replicas;
  private final SplittableRandom random;
  private final long herdingWindowNanos;
  private final boolean shareInFlight;
  private @Nullable Herding herding;

  /**
   * @param count replicas, at least 1
   * @param create makes replica {@code i} (each with its own seed)
   * @param seed chooses the replica of each request
   * @param herdingWindowNanos the window {@link #herding()} counts sends in: the scrape interval
   * @param shareInFlight whether the replicas share their in-flight accounts at each scrape (then every replica must
   *     be a {@link KinferenceRouter})
   */
  ReplicatedRouter(int count, IntFunction<FleetRouter> create, long seed, long herdingWindowNanos,
      boolean shareInFlight) {
    if (count < 1) {
      throw new IllegalArgumentException("router replicas must be at least 1: " + count);
    }
    this.replicas = new FleetRouter[count];
    for (int i = 0; i < count; i++) {
      replicas[i] = create.apply(i);
      if (shareInFlight && !(replicas[i] instanceof KinferenceRouter)) {
        throw new IllegalArgumentException("router '" + replicas[i].name()
            + "': only kinference routers share their in-flight accounts");
      }
    }
    this.shareInFlight = shareInFlight;
    this.random = new SplittableRandom(seed);
    this.herdingWindowNanos = herdingWindowNanos;
  }

  /** Where the replicas' sends went, window by window; null before {@link #start}. */
  @Nullable Herding herding() {
    return herding;
  }

  @Override
  public String name() {
    return replicas[0].name();
  }

  int replicaCount() {
    return replicas.length;
  }

  /** Replica {@code i}, for tests. */
  FleetRouter replica(int i) {
    return replicas[i];
  }

  @Override
  public void start(FleetView fleet) {
    herding = new Herding(fleet.size(), herdingWindowNanos);
    for (FleetRouter r : replicas) {
      r.start(fleet);
    }
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    Decision d = replicas[random.nextInt(replicas.length)].route(request, nowNanos);
    if (herding != null) {
      herding.onSend(d.server(), nowNanos);
    }
    return d;
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    for (FleetRouter r : replicas) {
      r.onMetrics(server, metrics, takenAtNanos, nowNanos);
    }
    if (shareInFlight) {
      long total = 0;
      for (FleetRouter r : replicas) {
        total += ((KinferenceRouter) r).state(server).pendingPrefillTokens();
      }
      for (FleetRouter r : replicas) {
        EndpointState state = ((KinferenceRouter) r).state(server);
        state.updatePeerPendingPrefillTokens(total - state.pendingPrefillTokens());
      }
    }
  }

  @Override
  public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
    for (FleetRouter r : replicas) {
      r.onKvEvents(server, batch, nowNanos);
    }
  }
}
