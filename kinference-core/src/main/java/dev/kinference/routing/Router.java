package dev.kinference.routing;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.endpoint.Saturation;
import dev.kinference.endpoint.StaticEndpointSource;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Sends each request to the endpoint expected to return its first token soonest. The steps of a decision, in
 * order, are documented in {@link dev.kinference.routing the package}.
 *
 * <pre>{@code
 * Router router = Router.builder()
 *     .endpoints(List.of(Endpoint.of("a", "http://10.0.0.1:8000", "qwen3-8b"), ...))
 *     .build();
 * RoutingDecision d = router.route(request);
 * // send to d.endpoint().uri(); then d.reportFirstToken(); d.reportFinished(usage);
 * }</pre>
 *
 * <p>Thread-safe: {@link #route} may be called from any number of threads. It takes no global lock (the fleet is
 * read through a volatile snapshot, the cache index optimistically), and once warmed up on a thread allocates only
 * the decision it returns. Close the router to stop its endpoint source.
 */
public final class Router implements AutoCloseable {

  // the parts a decision is made with, read by DecisionSteps
  final Fleet fleet;
  final CacheIndex cacheIndex;
  final Tokenizer tokenizer;
  final Tokenizer fallbackTokenizer = new ApproximateTokenizer();
  final Filter[] filters;
  final ProfileScorers defaultScoring;
  final Map<String, ProfileScorers> scoringByModel;
  final Picker picker;
  final @Nullable PolicyEngine policyEngine;
  final TtftModel ttftModel;
  final Saturation saturation;
  final int defaultBlockSize;
  final int maxAlternates;
  final LongSupplier ticker;
  final @Nullable RandomGenerator random;
  private final @Nullable EndpointSource endpointSource;
  private final DecisionSteps steps;

  private Router(Builder b) {
    this.fleet = b.fleet != null ? b.fleet : Fleet.create();
    this.cacheIndex = b.cacheIndex != null ? b.cacheIndex : ApproximateCacheIndex.builder().ticker(b.ticker).build();
    this.tokenizer = b.tokenizer != null ? b.tokenizer : fallbackTokenizer;
    this.filters = b.filters != null ? b.filters.toArray(new Filter[0])
        : new Filter[] {new HealthyFilter(), new FreshMetricsFilter()};
    this.ticker = b.ticker;
    this.defaultScoring = b.scoring.forRouter(cacheIndex.isPrecise(), b.routerReplicas, b.ticker);
    this.scoringByModel = b.scoring.byModel(b.ticker);
    this.picker = b.picker != null ? b.picker : new MaxScorePicker();
    this.policyEngine = b.policyEngine;
    this.ttftModel = b.ttftModel;
    this.saturation = b.saturation;
    this.defaultBlockSize = b.defaultBlockSize;
    this.maxAlternates = b.maxAlternates;
    this.random = b.random;
    int maxScorers = defaultScoring.scorers.length;
    for (ProfileScorers p : scoringByModel.values()) {
      maxScorers = Math.max(maxScorers, p.scorers.length);
    }
    this.steps = new DecisionSteps(this, maxScorers);
    this.fleet.addListener(cacheIndex);
    // a stateless scorer may serve several profiles as one instance: tell it of the fleet once
    Set<FleetListener> listening = Collections.newSetFromMap(new IdentityHashMap<>());
    List<ProfileScorers> all = new ArrayList<>(scoringByModel.values());
    all.add(0, defaultScoring);
    for (ProfileScorers p : all) {
      for (Scorer scorer : p.scorers) {
        if (scorer instanceof FleetListener listener && listening.add(listener)) {
          fleet.addListener(listener);
        }
      }
    }
    this.endpointSource = b.endpointSource;
    if (endpointSource != null) {
      endpointSource.start(fleet::setEndpoints);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Chooses an endpoint for {@code request} and counts the request against it. Report the request's progress on
   * the returned decision.
   *
   * @throws NoEndpointException if no endpoint serves the request's model, or none is available
   * @throws RequestRejectedException if the policy engine rejects the request
   */
  public RoutingDecision route(InferenceRequest request) {
    return steps.decide(request, true, null);
  }

  /**
   * Like {@link #route}, choosing only among the endpoints {@code within} accepts (candidates, the policy's
   * fallbacks and so the alternates alike): for a proxy that names the subset it may send to, such as the Gateway API
   * Inference Extension's {@code x-gateway-destination-endpoint-subset}. Unlike a {@link Filter}, the restriction
   * never fails open.
   *
   * @throws NoEndpointException if no endpoint serves the request's model, or none accepted is available
   * @throws RequestRejectedException if the policy engine rejects the request
   */
  public RoutingDecision route(InferenceRequest request, Predicate<Endpoint> within) {
    return steps.decide(request, true, Objects.requireNonNull(within, "within"));
  }

  /**
   * The decision {@link #route} would make, without counting the request, teaching the cache index, or updating
   * session affinity. For explaining and testing policies.
   */
  public RoutingDecision preview(InferenceRequest request) {
    return steps.decide(request, false, null);
  }

  /**
   * Where a pooling or tokenizer request (embeddings, rerank, score, tokenize) may go: the policy's verdict (aliases,
   * rewrites, rejections) and the local, non-draining endpoints serving its model, least loaded first (requests in
   * flight plus the estimated queue; ties in random order). No prefix term: such a request generates nothing and
   * leaves nothing in the cache for a later one to reuse; and nothing is counted, taught or remembered, so the caller
   * tracks the load it sends with {@link EndpointState#onDispatched} and {@link EndpointState#onFinished}. Healthy
   * endpoints come before unhealthy ones, which stay as a last resort.
   *
   * @throws NoEndpointException if no endpoint serves the request's model
   * @throws RequestRejectedException if the policy engine rejects the request
   */
  public PoolingChoice rankByLoad(InferenceRequest original) {
    return LoadRanking.rank(original, fleet.snapshot(), policyEngine, random);
  }

  /**
   * {@link #rankByLoad}'s answer.
   *
   * @param request the request as the policy left it (an alias resolved)
   * @param ranked the endpoints to try, in order
   * @param trace the policy's trace
   */
  public record PoolingChoice(InferenceRequest request, List<EndpointState> ranked, List<String> trace) {
    public PoolingChoice {
      ranked = List.copyOf(ranked);
      trace = List.copyOf(trace);
    }
  }

  /** Applies a KV-cache event from the endpoint with this id; ignored if it is not a member. */
  public void onKvEvent(String endpointId, KvEvent event) {
    EndpointState e = fleet.get(endpointId);
    if (e != null) {
      cacheIndex.onEvent(e, event);
    }
  }

  /** The scoring of {@code model}'s requests (as the policy leaves them): its own profile, or the router's. */
  ProfileScorers scoringFor(String model) {
    if (scoringByModel.isEmpty()) {
      return defaultScoring;
    }
    ProfileScorers p = scoringByModel.get(model);
    return p != null ? p : defaultScoring;
  }

  /** The fleet this router routes over; its states carry metrics and load. */
  public Fleet fleet() {
    return fleet;
  }

  public CacheIndex cacheIndex() {
    return cacheIndex;
  }

  public Tokenizer tokenizer() {
    return tokenizer;
  }

  public TtftModel ttftModel() {
    return ttftModel;
  }

  public Saturation saturation() {
    return saturation;
  }

  /** The block size assumed for endpoints whose metrics do not say. */
  public int defaultBlockSize() {
    return defaultBlockSize;
  }

  /** The default profile's scorer names, in combination order. */
  public String[] scorerNames() {
    return defaultScoring.names.clone();
  }

  /** The default profile's scorer weights, in combination order. */
  public double[] weights() {
    return defaultScoring.weights.clone();
  }

  /**
   * The profile requests of a model without one of its own are scored with, every parameter written out (scorers
   * given as instances report theirs through {@link Scorer#parameters()}).
   */
  public RoutingProfile profile() {
    return defaultScoring.profile;
  }

  /** The profile requests for {@code model} (as the policy leaves it) are scored with. */
  public RoutingProfile profile(String model) {
    return scoringFor(model).profile;
  }

  /** The models with a profile of their own, and those profiles. */
  public Map<String, RoutingProfile> profilesByModel() {
    Map<String, RoutingProfile> out = new TreeMap<>();
    scoringByModel.forEach((model, scoring) -> out.put(model, scoring.profile));
    return Collections.unmodifiableMap(out);
  }

  /** Names of the filters, in order. */
  public List<String> filterNames() {
    return Arrays.stream(filters).map(Filter::name).toList();
  }

  public String pickerName() {
    return picker.name();
  }

  /** The router's clock. */
  public long nanoTime() {
    return ticker.getAsLong();
  }

  /** Stops the endpoint source, if the router started one. */
  @Override
  public void close() {
    if (endpointSource != null) {
      endpointSource.close();
    }
  }

  @Override
  public String toString() {
    return "Router[index=" + cacheIndex.name() + ", tokenizer=" + tokenizer.name() + ", profile="
        + defaultScoring.profile.describe() + (scoringByModel.isEmpty() ? "" : ", profiles by model="
        + profilesByModel().keySet()) + ", filters=" + filterNames() + ", picker=" + picker.name() + "]";
  }

  /**
   * Configures a {@link Router}. Each setter validates its argument; {@link #build} checks the combination and
   * returns an immutable router. Not thread-safe.
   */
  public static final class Builder {
    private @Nullable Fleet fleet;
    private @Nullable EndpointSource endpointSource;
    private @Nullable CacheIndex cacheIndex;
    private @Nullable Tokenizer tokenizer;
    private @Nullable List<Filter> filters;
    private final ScoringSetup scoring = new ScoringSetup();
    private int routerReplicas = 1;
    private @Nullable Picker picker;
    private @Nullable PolicyEngine policyEngine;
    private TtftModel ttftModel = TtftModel.DEFAULT;
    private Saturation saturation = Saturation.DEFAULT;
    private int defaultBlockSize = BlockKeys.DEFAULT_BLOCK_SIZE;
    private int maxAlternates = 3;
    private LongSupplier ticker = System::nanoTime;
    private @Nullable RandomGenerator random;

    private Builder() {}

    /** Routes over these endpoints (a {@link StaticEndpointSource}). */
    public Builder endpoints(List<Endpoint> endpoints) {
      return endpointSource(StaticEndpointSource.of(endpoints));
    }

    /** Routes over the endpoints this source delivers; the router starts it and closes it. */
    public Builder endpointSource(EndpointSource source) {
      this.endpointSource = Objects.requireNonNull(source, "source");
      return this;
    }

    /** Routes over an existing fleet (shared with a metrics scraper, or with another router). */
    public Builder fleet(Fleet fleet) {
      this.fleet = Objects.requireNonNull(fleet, "fleet");
      return this;
    }

    /** The cache index. Default: an {@link ApproximateCacheIndex} on the router's clock. */
    public Builder cacheIndex(CacheIndex index) {
      this.cacheIndex = Objects.requireNonNull(index, "index");
      return this;
    }

    /** The tokenizer. Default: {@link ApproximateTokenizer}. */
    public Builder tokenizer(Tokenizer tokenizer) {
      this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
      return this;
    }

    /** Replaces the default filters ({@code healthy}, {@code fresh-metrics}); order matters. */
    public Builder filters(List<Filter> filters) {
      this.filters = List.copyOf(filters);
      return this;
    }

    /**
     * Adds a scorer with a weight. The first call replaces the default profile ({@link RoutingProfile#defaults}). A
     * scorer instance serves one router: several keep state about the router's fleet.
     */
    public Builder scorer(Scorer scorer, double weight) {
      scoring.scorer(scorer, weight);
      return this;
    }

    /**
     * Adds the scorer with this name, found with {@link java.util.ServiceLoader} (built-ins and any scorer jar on
     * the class or module path), with its declared default parameters: the same the default profile gives it.
     *
     * @throws IllegalArgumentException listing the known names if none has this name
     */
    public Builder scorer(String name, double weight) {
      return scorer(name, weight, Map.of());
    }

    /**
     * Adds the scorer with this name and these parameters over its defaults.
     *
     * @throws IllegalArgumentException listing the known names if none has this name, or naming the parameters
     *     that are not declared (and the ones that are) or out of range
     */
    public Builder scorer(String name, double weight, Map<String, ?> parameters) {
      scoring.scorer(name, weight, parameters);
      return this;
    }

    /**
     * Scores with this profile instead of the default one; exclusive with {@link #scorer}.
     *
     * @throws IllegalArgumentException naming every unknown scorer type and bad parameter
     */
    public Builder profile(RoutingProfile profile) {
      scoring.profile(profile);
      return this;
    }

    /**
     * Scores the requests for {@code model} (as the policy engine leaves the request) with this profile; the other
     * requests keep the router's profile. A pool's own profile, as {@code kinference serve} configures it.
     *
     * @throws IllegalArgumentException naming every unknown scorer type and bad parameter
     */
    public Builder profile(String model, RoutingProfile profile) {
      scoring.profile(model, profile);
      return this;
    }

    /**
     * How many independent routers share the traffic, as gateway replicas behind a Service do (default 1); with an
     * approximate cache index and more than one, the default profile adds {@code prefix-rendezvous} (see
     * {@link RoutingProfile#defaults(boolean, int)}). A profile given explicitly is used as it is.
     */
    public Builder routerReplicas(int replicas) {
      if (replicas < 1) {
        throw new IllegalArgumentException("router replicas must be at least 1: " + replicas);
      }
      this.routerReplicas = replicas;
      return this;
    }

    /** The cache index with this name, found with {@link java.util.ServiceLoader} (default configuration). */
    public Builder cacheIndex(String name) {
      return cacheIndex(Plugins.load(CacheIndex.class).require(name));
    }

    /** The tokenizer with this name, found with {@link java.util.ServiceLoader}. */
    public Builder tokenizer(String name) {
      return tokenizer(Plugins.load(Tokenizer.class).require(name));
    }

    /** The filters with these names, in this order, found with {@link java.util.ServiceLoader}. */
    public Builder filters(String... names) {
      PluginSet<Filter> known = Plugins.load(Filter.class);
      List<Filter> chosen = new ArrayList<>();
      for (String name : names) {
        chosen.add(known.require(name));
      }
      return filters(chosen);
    }

    /** The picker with this name, found with {@link java.util.ServiceLoader}. */
    public Builder picker(String name) {
      return picker(Plugins.load(Picker.class).require(name));
    }

    /** The picker. Default: {@link MaxScorePicker} with a 1% tie band. */
    public Builder picker(Picker picker) {
      this.picker = Objects.requireNonNull(picker, "picker");
      return this;
    }

    /** A policy engine consulted before every decision. Default: none. */
    public Builder policyEngine(PolicyEngine engine) {
      this.policyEngine = Objects.requireNonNull(engine, "engine");
      return this;
    }

    public Builder ttftModel(TtftModel model) {
      this.ttftModel = Objects.requireNonNull(model, "model");
      return this;
    }

    /** Saturation thresholds used by session affinity. Default: llm-d's. */
    public Builder saturation(Saturation saturation) {
      this.saturation = Objects.requireNonNull(saturation, "saturation");
      return this;
    }

    /** Block size assumed when an endpoint's metrics do not say. Default 16. */
    public Builder defaultBlockSize(int blockSize) {
      if (blockSize < 1 || blockSize > 4096) {
        throw new IllegalArgumentException("defaultBlockSize must be in [1, 4096]: " + blockSize);
      }
      this.defaultBlockSize = blockSize;
      return this;
    }

    /** How many alternates a decision ranks for retries. Default 3. */
    public Builder maxAlternates(int alternates) {
      if (alternates < 0 || alternates > 64) {
        throw new IllegalArgumentException("maxAlternates must be in [0, 64]: " + alternates);
      }
      this.maxAlternates = alternates;
      return this;
    }

    /** The clock, in nanoseconds. Default {@link System#nanoTime}; the simulator passes virtual time. */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * The random source for tie-breaking. Default: {@link ThreadLocalRandom}. A seeded generator makes
     * single-threaded runs reproducible; it need not be thread-safe, but concurrent use degrades its randomness.
     */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public Router build() {
      scoring.checkOneChoice();
      if (fleet != null && endpointSource != null && !fleet.endpoints().isEmpty()) {
        throw new IllegalStateException("give either a populated fleet or an endpoint source, not both");
      }
      return new Router(this);
    }
  }
}
