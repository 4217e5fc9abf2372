package dev.kinference.sim.bench;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.Prompts;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * Ours: the core's {@link Router} with its default profile, in-process, on the virtual clock and a seeded random
 * source, over a {@link Fleet} whose endpoint states receive the scraped metrics; with a {@link PreciseCacheIndex}
 * fed by the delayed KV events, or an {@link ApproximateCacheIndex} that learns from its own decisions.
 */
final class KinferenceRouter implements FleetRouter {

  private final boolean precise;
  private final long seed;
  private final String name;
  private final java.util.function.UnaryOperator<Router.Builder> customizer;
  private @Nullable Router router;
  private EndpointState[] states = new EndpointState[0];
  private final Map<String, Integer> serverOf = new HashMap<>();

  KinferenceRouter(boolean precise, long seed) {
    this(precise, seed, precise ? Routers.OURS : Routers.OURS_APPROX, b -> b);
  }

  /** A variant: the builder is customised after the fleet, index, tokenizer, clock and random are set. */
  KinferenceRouter(boolean precise, long seed, String name,
      java.util.function.UnaryOperator<Router.Builder> customizer) {
    this.precise = precise;
    this.seed = seed;
    this.name = name;
    this.customizer = customizer;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void start(FleetView view) {
    Fleet f = Fleet.of(view.endpoints());
    CacheIndex index = precise ? new PreciseCacheIndex()
        : ApproximateCacheIndex.builder().ticker(view::nowNanos).build();
    this.router = customizer.apply(Router.builder().fleet(f).cacheIndex(index).tokenizer(Prompts.TOKENIZER)
        .ticker(view::nowNanos).random(new SplittableRandom(seed))).build();
    this.states = new EndpointState[view.size()];
    for (int i = 0; i < states.length; i++) {
      String id = view.endpoints().get(i).id();
      states[i] = Objects.requireNonNull(f.get(id));
      serverOf.put(id, i);
    }
  }

  /** The router, for tests. */
  Router router() {
    return Objects.requireNonNull(router);
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    states[server].updateMetrics(metrics.toEndpointMetrics(nowNanos));
  }

  @Override
  public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
    Router r = Objects.requireNonNull(router);
    String id = states[server].id();
    for (KvEvent e : batch.events()) {
      r.onKvEvent(id, e);
    }
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    RoutingDecision d = Objects.requireNonNull(router).route(request.request());
    int server = Objects.requireNonNull(serverOf.get(d.endpoint().id()));
    return new Decision() {
      @Override
      public int server() {
        return server;
      }

      @Override
      public void onFirstToken(long now) {
        d.reportFirstToken();
      }

      @Override
      public void onFinished(RequestOutcome outcome, long now) {
        d.reportFinished(new Usage(outcome.promptTokens(), outcome.cachedTokens(), outcome.completionTokens()));
      }
    };
  }
}
