package dev.kinference.routing;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.endpoint.Health;
import dev.kinference.endpoint.Saturation;
import dev.kinference.endpoint.StaticEndpointSource;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger log = LoggerFactory.getLogger(Router.class);

  /** KV usage below which the default profile's {@code kv-utilization} scorer tells endpoints apart not at all. */
  private static final double DEFAULT_KV_KNEE = 0.5;

  /** The default profile's {@code queue-depth} weight of a request sent since the last scrape (see the scorer). */
  private static final double DEFAULT_SINCE_SCRAPE_WEIGHT = 0.25;

  private final Fleet fleet;
  private final CacheIndex cacheIndex;
  private final Tokenizer tokenizer;
  private final Tokenizer fallbackTokenizer = new ApproximateTokenizer();
  private final Filter[] filters;
  private final Scorer[] scorers;
  private final double[] weights;
  private final String[] scorerNames;
  private final Picker picker;
  private final @Nullable PolicyEngine policyEngine;
  private final TtftModel ttftModel;
  private final Saturation saturation;
  private final int defaultBlockSize;
  private final int maxAlternates;
  private final LongSupplier ticker;
  private final @Nullable RandomGenerator random;
  private final @Nullable EndpointSource endpointSource;
  private final ThreadLocal<Scratch> scratch;

  /** Per-thread working arrays, so a decision allocates only what it returns. */
  private static final class Scratch {
    final RoutingContext context;
    EndpointState[] filtered = new EndpointState[16];
    EndpointState[] subset = new EndpointState[16];
    int[] subsetIndex = new int[16];
    int[] subsetMatched = new int[16];
    double[] totals = new double[16];
    double[][] scorerScores;
    boolean[] taken = new boolean[16];

    Scratch(RoutingContext context, int scorerCount) {
      this.context = context;
      this.scorerScores = new double[scorerCount][16];
    }

    void ensure(int n) {
      if (filtered.length < n) {
        int cap = Math.max(n, filtered.length * 2);
        filtered = new EndpointState[cap];
        subset = new EndpointState[cap];
        subsetIndex = new int[cap];
        subsetMatched = new int[cap];
        totals = new double[cap];
        taken = new boolean[cap];
        for (int k = 0; k < scorerScores.length; k++) {
          scorerScores[k] = new double[cap];
        }
      }
      context.ensureCapacity(n);
    }
  }

  private Router(Builder b) {
    this.fleet = b.fleet != null ? b.fleet : Fleet.create();
    this.cacheIndex = b.cacheIndex != null ? b.cacheIndex : ApproximateCacheIndex.builder().ticker(b.ticker).build();
    this.tokenizer = b.tokenizer != null ? b.tokenizer : fallbackTokenizer;
    this.filters = b.filters != null ? b.filters.toArray(new Filter[0])
        : new Filter[] {new HealthyFilter(), new FreshMetricsFilter()};
    if (b.scorers.isEmpty()) {
      // Predicted TTFT alone is myopic: it duplicates a prefix onto a lightly loaded server, evicting other prefixes
      // there; prefix overlap prices the duplication. A light queue term pushes back against one server collecting
      // more than its share; it trusts the queue a server reports over the router's own sends since, which the TTFT
      // prediction already counts and which, counted in full, bunched unique prompts. KV headroom counts only above
      // half-full caches: below, it only added noise to the prediction on prompts that share nothing. Once every
      // candidate is saturated, prefix overlap counts five times over: a miss then also delays all the requests queued
      // behind it, and with the even weight an overloaded fleet slid into misses and lost most of its goodput. Then
      // too, a long prompt cached nowhere goes back where it was last sent: spread by load, groups of long prompts
      // exhausted every server's KV memory (docs/BENCHMARKS.md has the measurements). An approximate index already
      // remembers where prompts were sent, so that term comes with a precise index only.
      Scorer[] profile = {new PredictedTtftScorer(), new PrefixOverlapScorer(),
          new KvUtilizationScorer(DEFAULT_KV_KNEE), new SessionAffinityScorer(),
          new QueueDepthScorer(DEFAULT_SINCE_SCRAPE_WEIGHT), new PrefixUnderSaturationScorer(),
          new PrefixHomeScorer(PrefixHomeScorer.DEFAULT_MIN_CACHE_SHARE, b.ticker)};
      double[] profileWeights = {1.0, 1.0, 0.5, 1.0, 0.3, 4.0, 1.0};
      int used = cacheIndex.isPrecise() ? profile.length : profile.length - 1;
      this.scorers = Arrays.copyOf(profile, used);
      this.weights = Arrays.copyOf(profileWeights, used);
    } else {
      this.scorers = b.scorers.toArray(new Scorer[0]);
      this.weights = b.weights.stream().mapToDouble(Double::doubleValue).toArray();
    }
    this.scorerNames = Arrays.stream(scorers).map(Scorer::name).toArray(String[]::new);
    this.picker = b.picker != null ? b.picker : new MaxScorePicker();
    this.policyEngine = b.policyEngine;
    this.ttftModel = b.ttftModel;
    this.saturation = b.saturation;
    this.defaultBlockSize = b.defaultBlockSize;
    this.maxAlternates = b.maxAlternates;
    this.ticker = b.ticker;
    this.random = b.random;
    InferenceRequest placeholder = InferenceRequest.builder("placeholder").user("placeholder").build();
    TokenizedPrompt placeholderPrompt = TokenizedPrompt.of(fallbackTokenizer, new int[] {0}, placeholder);
    int scorerCount = scorers.length;
    this.scratch = ThreadLocal.withInitial(() -> new Scratch(
        new RoutingContext(placeholder, placeholderPrompt, ThreadLocalRandom.current()), scorerCount));
    this.fleet.addListener(cacheIndex);
    for (Scorer scorer : scorers) {
      if (scorer instanceof FleetListener listener) {
        fleet.addListener(listener);
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
    return decide(request, true, null);
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
    return decide(request, true, Objects.requireNonNull(within, "within"));
  }

  /**
   * The decision {@link #route} would make, without counting the request, teaching the cache index, or updating
   * session affinity. For explaining and testing policies.
   */
  public RoutingDecision preview(InferenceRequest request) {
    return decide(request, false, null);
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
    InferenceRequest request = original;
    Predicate<EndpointState> selector = null;
    List<String> trace = List.of();
    Fleet.Snapshot snap = fleet.snapshot();
    if (policyEngine != null) {
      switch (policyEngine.evaluate(original, snap)) {
        case PolicyVerdict.Reject r ->
            throw new RequestRejectedException(r.httpStatus(), r.reason(), r.retryAfter(), r.trace());
        case PolicyVerdict.Proceed p -> {
          request = p.request();
          selector = p.candidates();
          trace = p.trace();
        }
      }
    }
    List<EndpointState> pool = selector == null ? snap.serving(request.model()) : snap.all();
    RandomGenerator rnd = random != null ? random : ThreadLocalRandom.current();
    List<EndpointState> ranked = new ArrayList<>(pool.size());
    List<Double> load = new ArrayList<>(pool.size());
    for (EndpointState e : pool) {
      if (e.endpoint().isExternal() || e.health() == Health.DRAINING || (selector != null && !selector.test(e))) {
        continue;
      }
      ranked.add(e);
      load.add((e.health() == Health.HEALTHY ? 0 : 1e9) + e.inFlight() + e.estimatedWaiting(0.5)
          + rnd.nextDouble() * 1e-3);
    }
    if (ranked.isEmpty()) {
      if (selector == null && pool.isEmpty()) {
        throw new NoEndpointException(request.model(), true, new ArrayList<>(new TreeSet<>(snap.byModel().keySet())));
      }
      throw new NoEndpointException(request.model(), false, List.of());
    }
    Integer[] order = new Integer[ranked.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, java.util.Comparator.comparingDouble(load::get));
    List<EndpointState> out = new ArrayList<>(order.length);
    for (Integer i : order) {
      out.add(ranked.get(i));
    }
    return new PoolingChoice(request, out, trace);
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

  private RoutingDecision decide(InferenceRequest original, boolean account, @Nullable Predicate<Endpoint> within) {
    long now = ticker.getAsLong();
    InferenceRequest request = original;
    Predicate<EndpointState> selector = null;
    List<String> fallbackIds = List.of();
    boolean preferFallbacks = false;
    List<String> trace = List.of();
    Fleet.Snapshot snap = fleet.snapshot();
    if (policyEngine != null) {
      PolicyVerdict verdict = policyEngine.evaluate(original, snap);
      switch (verdict) {
        case PolicyVerdict.Reject r ->
            throw new RequestRejectedException(r.httpStatus(), r.reason(), r.retryAfter(), r.trace());
        case PolicyVerdict.Proceed p -> {
          request = p.request();
          selector = p.candidates();
          fallbackIds = p.fallbackEndpointIds();
          preferFallbacks = p.preferFallbacks();
          trace = p.trace();
        }
      }
    }

    Scratch s = scratch.get();
    List<EndpointState> pool = selector == null ? snap.serving(request.model()) : snap.all();
    s.ensure(pool.size() + fallbackIds.size() + 1);
    List<String> notes = null;
    if (request.sessionId() != null) {
      notes = note(notes, "session from " + request.sessionSource());
    }

    // Candidates: selected (or serving the model, not external), not draining, through the filters.
    EndpointState[] cand = s.filtered;
    int n = 0;
    for (int i = 0; i < pool.size(); i++) {
      EndpointState e = pool.get(i);
      if (e.health() == Health.DRAINING) {
        continue;
      }
      if (selector == null ? e.endpoint().isExternal() : !selector.test(e)) {
        continue;
      }
      if (within != null && !within.test(e.endpoint())) {
        continue;
      }
      cand[n++] = e;
    }
    for (Filter f : filters) {
      int kept = 0;
      for (int i = 0; i < n; i++) {
        if (f.accept(request, cand[i], now)) {
          kept++;
        }
      }
      if (kept == 0 && n > 0) {
        notes = note(notes, "filter " + f.name() + " failed open: it rejected all " + n + " candidates");
        continue;
      }
      if (kept < n) {
        int m = 0;
        for (int i = 0; i < n; i++) {
          if (f.accept(request, cand[i], now)) {
            cand[m++] = cand[i];
          }
        }
        n = m;
      }
    }

    // Fallbacks named by the policy, resolved against the fleet.
    int fallbackCount = 0;
    EndpointState[] fallbacks = null;
    if (!fallbackIds.isEmpty()) {
      fallbacks = new EndpointState[fallbackIds.size()];
      for (String id : fallbackIds) {
        EndpointState e = snap.byId().get(id);
        if (e != null && within != null && !within.test(e.endpoint())) {
          notes = note(notes, "fallback " + id + " is outside the allowed subset");
        } else if (e != null && e.health() == Health.HEALTHY) {
          fallbacks[fallbackCount++] = e;
        } else {
          notes = note(notes, "fallback " + id + " is " + (e == null ? "not in the fleet" : e.health()));
        }
      }
    }
    if (n == 0 && fallbackCount == 0) {
      if (selector == null && pool.isEmpty()) {
        throw new NoEndpointException(request.model(), true, new ArrayList<>(new TreeSet<>(snap.byModel().keySet())));
      }
      throw new NoEndpointException(request.model(), false, List.of());
    }

    // Tokens and prefix keys.
    TokenizedPrompt prompt;
    try {
      prompt = request.tokenize(tokenizer);
    } catch (TokenizationException | RuntimeException e) {
      log.warn("Tokenizer {} failed, routing with approximate tokens: {}", tokenizer.name(), e.toString());
      notes = note(notes, "tokenizer " + tokenizer.name() + " failed (" + e.getMessage() + "); used approximate");
      try {
        prompt = request.tokenize(fallbackTokenizer);
      } catch (TokenizationException impossible) {
        throw new IllegalStateException(impossible);
      }
    }

    RoutingContext ctx = s.context;
    ctx.reset(request, prompt, now, random != null ? random : ThreadLocalRandom.current(), saturation);
    ctx.setCount(n);
    EndpointState[] ctxCand = ctx.candidateArray();
    System.arraycopy(cand, 0, ctxCand, 0, n);
    lookup(s, ctx, prompt, n);
    for (int i = 0; i < n; i++) {
      ctx.setPredictedTtft(i, ttftModel.predictSeconds(ctxCand[i], ctx.uncachedTokens(i), ctx.blockSize(i)));
    }

    // Scores, combined.
    double[] totals = s.totals;
    Arrays.fill(totals, 0, n, 0.0);
    for (int k = 0; k < scorers.length; k++) {
      double[] sc = s.scorerScores[k];
      if (n > 0) {
        scorers[k].score(ctx, sc);
      }
      double w = weights[k];
      for (int i = 0; i < n; i++) {
        totals[i] += w * sc[i];
      }
    }

    // Pick, then rank alternates.
    int localRanked = n == 0 ? 0 : Math.min(n, 1 + maxAlternates);
    int rankedCount = localRanked + fallbackCount;
    EndpointState[] ranked = new EndpointState[rankedCount];
    int[] cached = new int[rankedCount];
    double[] ttft = new double[rankedCount];
    double[] rankedTotals = new double[rankedCount];
    double[] rankedScores = new double[rankedCount * scorers.length];
    int localStart = preferFallbacks ? fallbackCount : 0;
    int fallbackStart = preferFallbacks ? 0 : localRanked;
    int chosenLocal = -1;
    if (n > 0) {
      boolean[] taken = s.taken;
      Arrays.fill(taken, 0, n, false);
      chosenLocal = picker.pick(totals, n, ctx.random());
      int pick = chosenLocal;
      for (int r = 0; r < localRanked; r++) {
        if (r > 0) {
          pick = bestRemaining(totals, ctx, taken, n);
        }
        taken[pick] = true;
        int row = localStart + r;
        ranked[row] = ctxCand[pick];
        cached[row] = ctx.cachedTokens(pick);
        ttft[row] = ctx.predictedTtftSeconds(pick);
        rankedTotals[row] = totals[pick];
        for (int k = 0; k < scorers.length; k++) {
          rankedScores[row * scorers.length + k] = s.scorerScores[k][pick];
        }
      }
    }
    for (int f = 0; f < fallbackCount; f++) {
      int row = fallbackStart + f;
      EndpointState e = Objects.requireNonNull(fallbacks)[f];
      ranked[row] = e;
      cached[row] = 0;
      ttft[row] = ttftModel.predictSeconds(e, prompt.tokenCount(), defaultBlockSize);
      rankedTotals[row] = Double.NaN;
      Arrays.fill(rankedScores, row * scorers.length, (row + 1) * scorers.length, Double.NaN);
    }
    if (preferFallbacks && fallbackCount > 0) {
      notes = note(notes, "policy prefers fallbacks: local capacity saturated");
    }

    RoutingDecision decision = new RoutingDecision(this, request, ranked, rankedCount, 0, cached, ttft,
        rankedTotals, rankedScores, prompt.tokenCount(), trace, notes == null ? List.of() : notes, account, now);
    if (account) {
      EndpointState chosen = ranked[0];
      if (!chosen.endpoint().isExternal()) {
        cacheIndex.onRouted(chosen, prompt.keys(chosen.blockSize(defaultBlockSize)), request.promptRetention());
      }
      if (chosenLocal >= 0 && ranked[0] == ctxCand[chosenLocal]) {
        for (Scorer scorer : scorers) {
          scorer.onRouted(ctx, chosenLocal);
        }
      }
    }
    return decision;
  }

  /** Cached blocks per candidate, with one index lookup per distinct block size among the candidates. */
  private void lookup(Scratch s, RoutingContext ctx, TokenizedPrompt prompt, int n) {
    EndpointState[] cand = ctx.candidateArray();
    int firstSize = -1;
    boolean uniform = true;
    for (int i = 0; i < n; i++) {
      int bs = cand[i].endpoint().isExternal() ? defaultBlockSize : cand[i].blockSize(defaultBlockSize);
      ctx.setBlockSize(i, bs);
      if (firstSize < 0) {
        firstSize = bs;
      } else if (bs != firstSize) {
        uniform = false;
      }
    }
    if (n == 0) {
      return;
    }
    int[] matched = ctx.matchedArray();
    if (uniform) {
      cacheIndex.lookup(prompt.keys(firstSize), cand, n, matched);
      for (int i = 0; i < n; i++) {
        ctx.setMatched(i, matched[i]);
      }
      return;
    }
    boolean[] done = s.taken;
    Arrays.fill(done, 0, n, false);
    for (int i = 0; i < n; i++) {
      if (done[i]) {
        continue;
      }
      int bs = ctx.blockSize(i);
      int m = 0;
      for (int j = i; j < n; j++) {
        if (!done[j] && ctx.blockSize(j) == bs) {
          s.subset[m] = cand[j];
          s.subsetIndex[m++] = j;
          done[j] = true;
        }
      }
      PrefixKeys keys = prompt.keys(bs);
      cacheIndex.lookup(keys, s.subset, m, s.subsetMatched);
      for (int j = 0; j < m; j++) {
        ctx.setMatched(s.subsetIndex[j], s.subsetMatched[j]);
      }
    }
  }

  private static int bestRemaining(double[] totals, RoutingContext ctx, boolean[] taken, int n) {
    int best = -1;
    for (int i = 0; i < n; i++) {
      if (taken[i]) {
        continue;
      }
      if (best < 0 || totals[i] > totals[best]
          || (totals[i] == totals[best] && ctx.predictedTtftSeconds(i) < ctx.predictedTtftSeconds(best))) {
        best = i;
      }
    }
    return best;
  }

  private static List<String> note(@Nullable List<String> notes, String note) {
    List<String> out = notes == null ? new ArrayList<>(2) : notes;
    out.add(note);
    return out;
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

  /** The scorer names, in combination order. */
  public String[] scorerNames() {
    return scorerNames.clone();
  }

  /** The scorer weights, in combination order. */
  public double[] weights() {
    return weights.clone();
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
    return "Router[index=" + cacheIndex.name() + ", tokenizer=" + tokenizer.name() + ", scorers="
        + Arrays.toString(scorerNames) + ", weights=" + Arrays.toString(weights) + ", filters=" + filterNames()
        + ", picker=" + picker.name() + "]";
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
    private final List<Scorer> scorers = new ArrayList<>();
    private final List<Double> weights = new ArrayList<>();
    private @Nullable Picker picker;
    private @Nullable PolicyEngine policyEngine;
    private TtftModel ttftModel = TtftModel.DEFAULT;
    private Saturation saturation = Saturation.DEFAULT;
    private int defaultBlockSize = BlockKeys.DEFAULT_BLOCK_SIZE;
    private int maxAlternates = 3;
    private LongSupplier ticker = System::nanoTime;
    private @Nullable RandomGenerator random;
    private @Nullable PluginSet<Scorer> scorerPlugins;

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
     * Adds a scorer with a weight. The first call replaces the default profile ({@code predicted-ttft} 1,
     * {@code prefix-overlap} 1, {@code kv-utilization} 0.5 with knee 0.5, {@code session-affinity} 1,
     * {@code queue-depth} 0.3 with requests sent since the last scrape counted at 0.25, {@code
     * prefix-under-saturation} 4, and with a precise cache index {@code prefix-home} 1). A scorer instance serves one
     * router: several keep state about the router's fleet.
     */
    public Builder scorer(Scorer scorer, double weight) {
      Objects.requireNonNull(scorer, "scorer");
      if (!(weight > 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("weight must be positive and finite: " + weight);
      }
      for (Scorer s : scorers) {
        if (s.name().equals(scorer.name())) {
          throw new IllegalArgumentException("scorer '" + scorer.name() + "' added twice");
        }
      }
      scorers.add(scorer);
      weights.add(weight);
      return this;
    }

    /**
     * Adds the scorer with this name, found with {@link java.util.ServiceLoader} (built-ins and any scorer jar on
     * the class or module path).
     *
     * @throws IllegalArgumentException listing the known names if none has this name
     */
    public Builder scorer(String name, double weight) {
      if (scorerPlugins == null) {
        scorerPlugins = Plugins.load(Scorer.class);
      }
      return scorer(scorerPlugins.require(name), weight);
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
      if (fleet != null && endpointSource != null && !fleet.endpoints().isEmpty()) {
        throw new IllegalStateException("give either a populated fleet or an endpoint source, not both");
      }
      return new Router(this);
    }
  }
}
