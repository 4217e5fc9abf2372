package dev.kinference.gateway;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.cloud.CloudProvider;
import dev.kinference.cloud.ExternalProviders;
import dev.kinference.cloud.PriceTable;
import dev.kinference.cloud.Prices;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Saturation;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyWatcher;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.engine.YamlPolicyEngine;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.Price;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingProfile;
import dev.kinference.vllm.VllmLabels;
import dev.kinference.vllm.kvevents.KvEventSubscriptions;
import dev.kinference.vllm.metrics.MetricsScraper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A complete gateway assembled from a policy configuration, as {@code kinference serve --config DIR} runs it:
 * <ul>
 *   <li>the fleet: every pool's static endpoints and every external provider's models, plus the servers a
 *       {@link Builder#discovery discovery source} finds (such as {@code kinference-k8s-discovery});</li>
 *   <li>the vLLM module: a {@link MetricsScraper} keeping each local endpoint's load and health current, and, when
 *       endpoints carry a KV-event address ({@link VllmLabels#KV_EVENTS}) or {@link Builder#preciseIndex} says so,
 *       {@link KvEventSubscriptions} feeding a {@link PreciseCacheIndex} (otherwise the router's approximate index
 *       learns from its own decisions);</li>
 *   <li>the policy module: the {@link YamlPolicyEngine} in the router, {@link Governance} as the gateway's
 *       {@link GovernanceGuard} (tenants, limits, budgets, accounting);</li>
 *   <li>the cloud module: the configuration's ExternalProviders as {@link ExternalProviders} (keys from the
 *       environment or a file, prices from the provider's models).</li>
 * </ul>
 * Each pool's {@code spec.routing.profile} scores the requests for its model; the other requests get the router's
 * default profile (docs/ROUTING.md). With {@link Builder#watch} the files are watched: a valid change is applied
 * (fleet membership and providers follow; a changed routing profile is logged and takes effect at the next start,
 * since scorers keep state), an invalid one is refused and the previous configuration stays in force.
 *
 * <p>Thread-safe; close it to stop everything it started.
 */
public final class PolicyGateway implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PolicyGateway.class);

  private final @Nullable PolicyWatcher watcher;
  private final Governance governance;
  private final Fleet fleet;
  private final Router router;
  /** The pools' routing profiles the router was built with: they stay until a restart. */
  private final Map<String, RoutingProfile> startingProfiles;
  private final MetricsScraper scraper;
  private final @Nullable PeerPrefillSharing peerSharing;
  private final @Nullable KvEventSubscriptions kvEvents;
  private final Gateway gateway;
  private final Function<String, @Nullable String> environment;
  private final @Nullable EndpointSource discovery;
  private final Supplier<PolicyConfig> source;
  private @Nullable AutoCloseable configFeed;
  private final AtomicReference<PolicyConfig> fedConfig;
  // Written by the discovery thread, read when a configuration is applied.
  private volatile List<Endpoint> discovered = List.of();

  private PolicyGateway(Builder b) throws IOException {
    Supplier<PolicyConfig> source;
    this.fedConfig = new AtomicReference<>(b.config != null ? b.config : PolicyConfig.EMPTY);
    if (b.paths != null) {
      this.watcher = PolicyWatcher.start(b.paths);
      source = watcher;
    } else {
      this.watcher = null;
      source = fedConfig::get;
    }
    this.discovery = b.discovery;
    this.source = source;
    this.environment = b.environment;
    PolicyConfig cfg = source.get();
    YamlPolicyEngine engine = YamlPolicyEngine.builder().config(source).saturation(b.saturation).build();
    Governance.Builder governed = Governance.builder().engine(engine);
    if (b.stateStore != null) {
      governed.rateLimitStore(b.stateStore);
    }
    this.governance = governed.build();
    this.fleet = Fleet.of(cfg.endpoints());
    // Without a choice: precise when a configured endpoint publishes KV events. Discovered or fed endpoints are not
    // known yet, so a deployment relying on them says which it wants (the Helm chart: precise).
    boolean precise = b.kvEvents && (b.preciseIndex != null ? b.preciseIndex : cfg.endpoints().stream()
        .anyMatch(e -> !e.isExternal() && e.label(VllmLabels.KV_EVENTS) != null));
    // hybrid-attention models: a prefix counts as far as each of their KV-cache groups can reuse it
    CacheIndex index = precise ? HybridCacheIndex.wrap(new PreciseCacheIndex()) : new ApproximateCacheIndex();
    Router.Builder rb = Router.builder().fleet(fleet).cacheIndex(index).policyEngine(engine)
        .saturation(b.saturation).routerReplicas(b.routerReplicas);
    // each pool's spec.routing.profile scores the requests for its model
    this.startingProfiles = cfg.routingProfiles();
    startingProfiles.forEach(rb::profile);
    b.router.accept(rb);
    this.router = rb.build();
    this.scraper = MetricsScraper.builder().interval(b.scrapeInterval).build().attach(fleet);
    this.kvEvents = precise ? KvEventSubscriptions.create(index).attach(fleet) : null;
    // one of several replicas over a shared store: the replicas agree on the prompts each has in a server's prefill.
    // Only with the precise index: an approximate one's prefix evidence is its own decisions, which the others' load
    // outweighs (three sharing approximate replicas lost 14.4% on shared prefixes, independent ones 7.7%).
    RateLimitStore store = governance.rateLimitStore();
    this.peerSharing = b.peerPrefillSharing && precise && store.shared() && b.routerReplicas > 1
        ? PeerPrefillSharing.start(fleet, store, b.scrapeInterval) : null;
    Gateway.Builder gb = Gateway.builder().router(router).providers(providers(cfg, environment))
        .guard(GovernanceGuard.of(governance)).localPrices(localPrices(cfg));
    if (governance.rateLimitStore().shared()) {
      gb.blockingPlugins(true); // each reservation is a round trip to the store: keep it off the I/O threads
    }
    b.gateway.accept(gb);
    this.gateway = gb.build();
    if (watcher != null) {
      // all or nothing: the watcher puts a configuration in force only once what it needs is built, and logs a
      // refusal (invalid, or unusable here) once
      watcher.prepareWith(this::prepare);
    }
    AutoCloseable feed = null;
    try {
      feed = b.configFeed == null ? null : b.configFeed.apply(this::apply);
      if (discovery != null) {
        discovery.start(found -> {
          discovered = List.copyOf(found);
          refreshFleet();
        });
      }
    } catch (RuntimeException e) {
      // Nothing is left running when the gateway cannot be built (no cluster to discover, say).
      this.configFeed = feed;
      close();
      throw e;
    }
    this.configFeed = feed;
    for (String problem : providers(cfg, environment).problems()) {
      log.warn("{}", problem);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Applies a delivered configuration all or nothing: what it needs is built first; on any failure the previous
   * configuration stays in force whole (policy, fleet and providers) and the failure is logged once.
   */
  private void apply(PolicyConfig next) {
    Runnable commit;
    try {
      commit = prepare(next);
    } catch (RuntimeException e) {
      log.warn("Configuration change refused, the gateway cannot use it ({}); the previous one stays in force",
          e.toString());
      return;
    }
    fedConfig.set(next);
    commit.run();
  }

  /**
   * Builds everything {@code next} needs (its providers and their problems) without touching what is in force;
   * throws when it cannot. The returned action switches the fleet and the providers once {@code next} is the
   * configuration in force.
   */
  private Runnable prepare(PolicyConfig next) {
    ExternalProviders providers = providers(next, environment);
    List<String> problems = providers.problems();
    boolean profilesChanged = !next.routingProfiles().equals(startingProfiles);
    return () -> {
      if (profilesChanged) {
        // the router's scorers keep state (sessions, prompt history) that a new profile would lose mid-flight
        log.warn("The pools' routing profiles changed; the gateway keeps scoring with the ones it started with "
            + "until it restarts: {}", startingProfiles);
      }
      refreshFleet();
      gateway.updateProviders(providers);
      problems.forEach(p -> log.warn("{}", p));
      log.info("Configuration applied: {}", next);
    };
  }

  /**
   * Sets the fleet to the current configuration's endpoints and the discovered ones. Synchronized: discovery and
   * configuration changes arrive on different threads, and the last write must reflect both.
   */
  private synchronized void refreshFleet() {
    fleet.setEndpoints(members(source.get()));
  }

  /** The configuration's endpoints, then the discovered ones whose ids it does not already use. */
  private List<Endpoint> members(PolicyConfig cfg) {
    List<Endpoint> discoveredNow = discovered;
    if (discoveredNow.isEmpty()) {
      return cfg.endpoints();
    }
    Map<String, Endpoint> byId = new LinkedHashMap<>();
    cfg.endpoints().forEach(e -> byId.put(e.id(), e));
    discoveredNow.forEach(e -> byId.putIfAbsent(e.id(), e));
    return List.copyOf(byId.values());
  }

  /** The configuration's external providers, for the cloud module. */
  static ExternalProviders providers(PolicyConfig cfg, Function<String, @Nullable String> environment) {
    List<CloudProvider> out = new ArrayList<>();
    for (ExternalProvider p : cfg.providers()) {
      var spec = p.spec();
      CloudProvider.Builder b = CloudProvider.builder(p.name()).api(spec.api().yamlName())
          .baseUri(spec.baseUrl().toString())
          .connectTimeout(spec.timeouts().connect())
          .firstTokenTimeout(spec.timeouts().firstToken())
          .idleTimeout(spec.timeouts().firstToken())
          .requestTimeout(spec.timeouts().request());
      if (spec.apiKey().env() != null) {
        b.apiKeyEnv(Objects.requireNonNull(spec.apiKey().env()));
      } else if (spec.apiKey().file() != null) {
        b.apiKeyFile(Path.of(Objects.requireNonNull(spec.apiKey().file())));
      }
      for (var m : spec.models()) {
        Price price = p.priceOf(m.name());
        b.model(m.name(), prices(price));
      }
      out.add(b.build());
    }
    return ExternalProviders.builder().providers(out).environment(environment).build();
  }

  static PriceTable localPrices(PolicyConfig cfg) {
    Map<String, Prices> prices = new LinkedHashMap<>();
    for (InferencePool pool : cfg.pools()) {
      Price p = pool.spec().price();
      if (p != null) {
        prices.putIfAbsent(pool.spec().model(), prices(p));
      }
    }
    return PriceTable.of(prices, "USD");
  }

  private static Prices prices(@Nullable Price p) {
    return p == null ? Prices.FREE : new Prices(p.input(), p.cachedInputOrInput(), p.output());
  }

  /** Starts serving. */
  public PolicyGateway start() {
    gateway.start();
    return this;
  }

  public Gateway gateway() {
    return gateway;
  }

  public Router router() {
    return router;
  }

  public Fleet fleet() {
    return fleet;
  }

  public Governance governance() {
    return governance;
  }

  /**
   * Whether this replica shares its in-flight prefill with the others: with a precise cache index, a shared store
   * and more than one router replica, unless {@link Builder#peerPrefillSharing} turned it off.
   */
  public boolean sharesInFlightPrefill() {
    return peerSharing != null;
  }

  /** The watcher of the configuration files ({@link Builder#watch}), or null when the configuration comes otherwise. */
  public @Nullable PolicyWatcher watcher() {
    return watcher;
  }

  /** The endpoints of the current configuration. */
  public List<Endpoint> endpoints() {
    return governance.config().endpoints();
  }

  @Override
  public void close() {
    // Sources of change first, so that no reload reaches what is already closed.
    if (watcher != null) {
      watcher.close();
    }
    if (discovery != null) {
      discovery.close();
    }
    if (configFeed != null) {
      try {
        configFeed.close();
      } catch (Exception e) {
        log.warn("closing the configuration feed failed", e);
      }
    }
    gateway.close();
    if (peerSharing != null) {
      peerSharing.close();
    }
    scraper.close();
    if (kvEvents != null) {
      kvEvents.close();
    }
    router.close();
    governance.rateLimitStore().close();
  }

  /** Configures a {@link PolicyGateway}; not thread-safe. */
  public static final class Builder {
    private @Nullable PolicyConfig config;
    private @Nullable List<Path> paths;
    private Saturation saturation = Saturation.DEFAULT;
    private Duration scrapeInterval = Duration.ofMillis(50);
    private boolean kvEvents = true;
    private Function<String, @Nullable String> environment = System::getenv;
    private Consumer<Router.Builder> router = r -> { };
    private Consumer<Gateway.Builder> gateway = g -> { };
    private @Nullable EndpointSource discovery;
    private @Nullable Function<Consumer<PolicyConfig>, AutoCloseable> configFeed;
    private @Nullable Boolean preciseIndex;
    private @Nullable RateLimitStore stateStore;
    private int routerReplicas = 1;
    private boolean peerPrefillSharing = true;

    private Builder() {}

    /**
     * How many gateway replicas share the traffic (default 1): with an approximate cache index and more than one, the
     * default routing profile makes the replicas agree where conversations and new prompt groups go (see
     * {@link dev.kinference.routing.RoutingProfile#defaults(boolean, int)}); with more than one, a precise index and
     * a {@link #stateStore shared store}, each replica publishes its pending prefill tokens per endpoint there at every
     * scrape interval and counts the others' beside its own.
     */
    public Builder routerReplicas(int replicas) {
      if (replicas < 1) {
        throw new IllegalArgumentException("router replicas must be at least 1: " + replicas);
      }
      this.routerReplicas = replicas;
      return this;
    }

    /**
     * Whether replicas that can share their pending prefill tokens (see {@link #routerReplicas}) do. Default true;
     * false makes them route independently over the same shared store, which is what the replicas benchmark
     * ({@code bench/replicas-bench.sh}) compares sharing with.
     */
    public Builder peerPrefillSharing(boolean share) {
      this.peerPrefillSharing = share;
      return this;
    }

    /**
     * Where rate limits, budgets and usage totals are kept: a shared store (for example a {@link
     * dev.kinference.policy.limits.ResilientStateStore} over Redis, from {@link
     * dev.kinference.policy.limits.StateStores#open}) makes them hold across replicas and restarts. Default: this
     * process's memory. The gateway closes it.
     */
    public Builder stateStore(RateLimitStore store) {
      this.stateStore = Objects.requireNonNull(store, "store");
      return this;
    }

    /** A fixed configuration. */
    public Builder config(PolicyConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      this.paths = null;
      return this;
    }

    /** The YAML files or directories to load and watch for changes (instead of a configuration feed). */
    public Builder watch(List<Path> files) {
      if (files.isEmpty()) {
        throw new IllegalArgumentException("no configuration files");
      }
      this.paths = List.copyOf(files);
      this.config = null;
      this.configFeed = null;
      return this;
    }

    /**
     * Whether the router uses the precise index fed by the servers' KV events (true) or the approximate one learned
     * from its own decisions (false). Default: precise when a configured endpoint carries a KV-event address.
     */
    public Builder preciseIndex(boolean precise) {
      this.preciseIndex = precise;
      return this;
    }

    /**
     * Configurations delivered by someone else, such as {@code PolicyResourceSource} watching custom resources:
     * {@code subscribe} is called once with the consumer of each new valid configuration and returns what stops
     * the deliveries (closed with the gateway). Until the first arrives, the configuration given to
     * {@link #config} is in force (default: {@link PolicyConfig#EMPTY}, which serves every discovered model).
     */
    public Builder configFeed(Function<Consumer<PolicyConfig>, AutoCloseable> subscribe) {
      this.configFeed = Objects.requireNonNull(subscribe, "subscribe");
      this.paths = null;
      return this;
    }

    /**
     * Servers found by discovery (such as {@code kinference-k8s-discovery}'s {@code KubernetesEndpointSource}),
     * served next to the configuration's static endpoints; a configured endpoint wins over a discovered one with the
     * same id. Started by {@link #build} and closed with the gateway.
     */
    public Builder discovery(EndpointSource source) {
      this.discovery = Objects.requireNonNull(source, "source");
      return this;
    }

    /** When an endpoint counts as saturated, for the router, the policy and the gateway queue. */
    public Builder saturation(Saturation saturation) {
      this.saturation = Objects.requireNonNull(saturation, "saturation");
      return this;
    }

    /** How often each server's metrics are scraped. Default 50 ms. */
    public Builder scrapeInterval(Duration interval) {
      this.scrapeInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** Whether to subscribe to KV events where endpoints publish them. Default true. */
    public Builder kvEvents(boolean enabled) {
      this.kvEvents = enabled;
      return this;
    }

    /** Where provider keys are looked up. Default {@link System#getenv}. */
    public Builder environment(Function<String, @Nullable String> lookup) {
      this.environment = Objects.requireNonNull(lookup, "lookup");
      return this;
    }

    /** Adjusts the router (scorers, tokenizer) before it is built. */
    public Builder router(Consumer<Router.Builder> settings) {
      this.router = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /** Adjusts the gateway (host, port, timeouts, queue) before it is built. */
    public Builder gateway(Consumer<Gateway.Builder> settings) {
      this.gateway = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Builds everything, without starting the gateway.
     *
     * @throws IOException if watched files cannot be read
     * @throws dev.kinference.policy.config.InvalidConfigException if the configuration has errors
     */
    public PolicyGateway build() throws IOException {
      if (config == null && paths == null && configFeed == null && discovery == null) {
        throw new IllegalStateException("give a configuration, files to watch, a configuration feed or discovery");
      }
      return new PolicyGateway(this);
    }
  }
}
