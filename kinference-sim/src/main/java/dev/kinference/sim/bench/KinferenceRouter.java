package dev.kinference.sim.bench;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.OffloadedPrefixes;
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
 *
 * <p>With the precise index, the servers' offload-tier events ({@code medium} CPU) feed one
 * {@link OffloadedPrefixes} per server attached to its endpoint state, as the gateway's KV-event subscriber does, so
 * the TTFT prediction credits a prefix found there at its reload time (the servers' host-link speed, which an
 * operator would configure); the {@link Routers#OURS_NO_TIER} variant leaves them out.
 */
final class KinferenceRouter implements FleetRouter {

  private final boolean precise;
  private final boolean creditOffloadTier;
  private final long seed;
  private final String name;
  private final java.util.function.UnaryOperator<Router.Builder> customizer;
  private @Nullable Router router;
  private EndpointState[] states = new EndpointState[0];
  private @Nullable OffloadedPrefixes[] tiers = new OffloadedPrefixes[0];
  private @Nullable PreciseCacheIndex preciseIndex;
  private @Nullable MambaStates mambaStates;
  private final Map<String, Integer> serverOf = new HashMap<>();

  KinferenceRouter(boolean precise, long seed) {
    this(precise, seed, precise ? Routers.OURS : Routers.OURS_APPROX, b -> b);
  }

  /** Ours with the precise index, crediting the servers' offload tiers or not. */
  static KinferenceRouter precise(long seed, boolean creditOffloadTier, String name) {
    return new KinferenceRouter(true, creditOffloadTier, seed, name, b -> b);
  }

  /** A variant: the builder is customised after the fleet, index, tokenizer, clock and random are set. */
  KinferenceRouter(boolean precise, long seed, String name,
      java.util.function.UnaryOperator<Router.Builder> customizer) {
    this(precise, precise, seed, name, customizer);
  }

  private KinferenceRouter(boolean precise, boolean creditOffloadTier, long seed, String name,
      java.util.function.UnaryOperator<Router.Builder> customizer) {
    this.precise = precise;
    this.creditOffloadTier = creditOffloadTier && precise;
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
    PreciseCacheIndex p = precise ? new PreciseCacheIndex() : null;
    this.preciseIndex = p;
    MambaStates m = p == null ? null : MambaStates.of(view.model(), view.size(),
        view.engine(0).config().model().mambaGroups(), view.engine(0).config().blockSize());
    this.mambaStates = m;
    HybridCacheIndex hybrid = m == null || p == null ? null : HybridCacheIndex.wrap(p);
    CacheIndex index = p == null ? ApproximateCacheIndex.builder().ticker(view::nowNanos).build()
        : hybrid == null ? p : hybrid;
    this.router = customizer.apply(Router.builder().fleet(f).cacheIndex(index).tokenizer(Prompts.TOKENIZER)
        .ticker(view::nowNanos).random(new SplittableRandom(seed))).build();
    this.states = new EndpointState[view.size()];
    this.tiers = new OffloadedPrefixes[view.size()];
    for (int i = 0; i < states.length; i++) {
      String id = view.endpoints().get(i).id();
      states[i] = Objects.requireNonNull(f.get(id));
      serverOf.put(id, i);
      if (creditOffloadTier && view.engine(i).config().cpuOffloadBytes() > 0) {
        // static hardware facts of the server (its host link), as an operator configures them; not its live state
        OffloadedPrefixes tier = new OffloadedPrefixes(view.model(),
            view.engine(i).config().offloadReloadTokensPerSecond());
        tiers[i] = tier;
        states[i].attachOffloadTier(tier);
      }
    }
    if (m != null && hybrid != null) {
      m.registerWith(hybrid, states);
    }
  }

  /** This router's state of {@code server}: its own account of what it sent there. */
  EndpointState state(int server) {
    return states[server];
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
    OffloadedPrefixes tier = tiers[server];
    PreciseCacheIndex p = preciseIndex;
    EndpointState state = states[server];
    MambaStates m = mambaStates;
    if (m != null && p != null) {
      m.apply(server, batch, hash -> p.routerKey(state, hash));
    }
    for (KvEvent event : batch.fullAttentionEvents()) {
      KvEvent e = m != null && p != null ? m.indexedEvent(server, event, hash -> p.routerKey(state, hash)) : event;
      if (e == null) {
        continue;
      }
      if (tier != null && p != null && !isGpu(e)) {
        tier.onEvent(e, hash -> p.routerKey(state, hash));
      } else {
        r.onKvEvent(id, e);
        if (tier != null && e instanceof KvEvent.AllBlocksCleared) {
          tier.clear();
        }
      }
    }
  }

  private static boolean isGpu(KvEvent e) {
    return switch (e) {
      case KvEvent.BlockStored s -> s.medium() == KvEvent.Medium.GPU;
      case KvEvent.BlockRemoved r -> r.medium() == KvEvent.Medium.GPU;
      case KvEvent.AllBlocksCleared c -> true;
    };
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
