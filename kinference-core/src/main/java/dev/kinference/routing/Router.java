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
import dev.kinference.plugin.Parameters;
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
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
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

  private final Fleet fleet;
  private final CacheIndex cacheIndex;
  private final Tokenizer tokenizer;
  private final Tokenizer fallbackTokenizer = new ApproximateTokenizer();
  private final Filter[] filters;
  private final ProfileScorers defaultScoring;
  private final Map<String, ProfileScorers> scoringByModel;
  private final Picker picker;
  private final @Nullable PolicyEngine policyEngine;
  private final TtftModel ttftModel;
  private final Saturation saturation;
  private final int defaultBlockSize;
  private final int maxAlternates;
  private final LongSupplier ticker;
  private final @Nullable RandomGenerator random;
  private final @Nullable EndpointSource endpointSource;
  private final ThreadLocal<DecisionScratch> scratch;
  /** What an idle thread's scratch holds instead of the last request. */
  private final InferenceRequest placeholder;
  private final TokenizedPrompt placeholderPrompt;

  private Router(Builder b) {
    this.fleet = b.fleet != null ? b.fleet : Fleet.create();
    this.cacheIndex = b.cacheIndex != null ? b.cacheIndex : ApproximateCacheIndex.builder().ticker(b.ticker).build();
    this.tokenizer = b.tokenizer != null ? b.tokenizer : fallbackTokenizer;
    this.filters = b.filters != null ? b.filters.toArray(new Filter[0])
        : new Filter[] {new HealthyFilter(), new FreshMetricsFilter()};
    this.ticker = b.ticker;
    this.defaultScoring = b.defaultScoring(cacheIndex.isPrecise());
    Map<String, ProfileScorers> byModel = new HashMap<>();
    b.profilesByModel.forEach((model, profile) -> byModel.put(model,
        ProfileScorers.create(profile, b.scorerPlugins(), b.ticker)));
    this.scoringByModel = Map.copyOf(byModel);
    this.picker = b.picker != null ? b.picker : new MaxScorePicker();
    this.policyEngine = b.policyEngine;
    this.ttftModel = b.ttftModel;
    this.saturation = b.saturation;
    this.defaultBlockSize = b.defaultBlockSize;
    this.maxAlternates = b.maxAlternates;
    this.random = b.random;
    this.placeholder = InferenceRequest.builder("placeholder").user("placeholder").build();
    this.placeholderPrompt = TokenizedPrompt.of(fallbackTokenizer, new int[] {0}, placeholder);
    int scorerCount = defaultScoring.scorers.length;
    for (ProfileScorers p : scoringByModel.values()) {
      scorerCount = Math.max(scorerCount, p.scorers.length);
    }
    int maxScorers = scorerCount;
    this.scratch = ThreadLocal.withInitial(() -> new DecisionScratch(
        new RoutingContext(placeholder, placeholderPrompt, ThreadLocalRandom.current()), maxScorers, defaultScoring));
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

  /** One decision: the steps of the package documentation, in order, one method each. */
  private RoutingDecision decide(InferenceRequest original, boolean account, @Nullable Predicate<Endpoint> within) {
    DecisionScratch s = scratch.get();
    s.begin(original, ticker.getAsLong());
    try {
      Fleet.Snapshot snap = fleet.snapshot();
      applyPolicy(s, original, snap);
      collectCandidates(s, snap, within);
      applyFilters(s);
      resolveFallbacks(s, snap, within);
      lookUpCache(s);
      score(s);
      RoutingDecision decision = pick(s, account);
      if (account) {
        account(s, decision);
      }
      return decision;
    } finally {
      s.end(placeholder, placeholderPrompt);
    }
  }

  /** Step 1: the policy engine may reject the request, rewrite it, select the candidates and name fallbacks. */
  private void applyPolicy(DecisionScratch s, InferenceRequest original, Fleet.Snapshot snap) {
    if (policyEngine == null) {
      return;
    }
    switch (policyEngine.evaluate(original, snap)) {
      case PolicyVerdict.Reject r ->
          throw new RequestRejectedException(r.httpStatus(), r.reason(), r.retryAfter(), r.trace());
      case PolicyVerdict.Proceed p -> {
        s.request = p.request();
        s.selector = p.candidates();
        s.fallbackIds = p.fallbackEndpointIds();
        s.preferFallbacks = p.preferFallbacks();
        s.trace = p.trace();
      }
    }
  }

  /**
   * Step 2: the candidates, the members the policy selected (or, without a selection, the local ones serving the
   * model), not draining, within the allowed subset.
   */
  private void collectCandidates(DecisionScratch s, Fleet.Snapshot snap, @Nullable Predicate<Endpoint> within) {
    Predicate<EndpointState> selector = s.selector;
    List<EndpointState> pool = selector == null ? snap.serving(s.request.model()) : snap.all();
    s.pool = pool;
    s.ensure(pool.size() + s.fallbackIds.size() + 1);
    if (s.request.sessionId() != null) {
      s.note("session from " + s.request.sessionSource());
    }
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
    s.candidates = n;
  }

  /** Step 3: the filters, in order, each failing open (a filter that would reject every candidate is skipped). */
  private void applyFilters(DecisionScratch s) {
    EndpointState[] cand = s.filtered;
    int n = s.candidates;
    for (Filter f : filters) {
      int kept = 0;
      for (int i = 0; i < n; i++) {
        if (f.accept(s.request, cand[i], s.now)) {
          kept++;
        }
      }
      if (kept == 0 && n > 0) {
        s.note("filter " + f.name() + " failed open: it rejected all " + n + " candidates");
        continue;
      }
      if (kept < n) {
        int m = 0;
        for (int i = 0; i < n; i++) {
          if (f.accept(s.request, cand[i], s.now)) {
            cand[m++] = cand[i];
          }
        }
        n = m;
      }
    }
    s.candidates = n;
  }

  /**
   * Part of step 2, after the filters (which never apply to fallbacks): the policy's fallbacks resolved against the
   * fleet, healthy and within the allowed subset. Throws when there is neither a candidate nor a fallback.
   */
  private void resolveFallbacks(DecisionScratch s, Fleet.Snapshot snap, @Nullable Predicate<Endpoint> within) {
    if (!s.fallbackIds.isEmpty()) {
      EndpointState[] fallbacks = new EndpointState[s.fallbackIds.size()];
      int count = 0;
      for (String id : s.fallbackIds) {
        EndpointState e = snap.byId().get(id);
        if (e != null && within != null && !within.test(e.endpoint())) {
          s.note("fallback " + id + " is outside the allowed subset");
        } else if (e != null && e.health() == Health.HEALTHY) {
          fallbacks[count++] = e;
        } else {
          s.note("fallback " + id + " is " + (e == null ? "not in the fleet" : e.health()));
        }
      }
      s.fallbacks = fallbacks;
      s.fallbackCount = count;
    }
    if (s.candidates == 0 && s.fallbackCount == 0) {
      if (s.selector == null && s.pool.isEmpty()) {
        throw new NoEndpointException(s.request.model(), true,
            new ArrayList<>(new TreeSet<>(snap.byModel().keySet())));
      }
      throw new NoEndpointException(s.request.model(), false, List.of());
    }
  }

  /**
   * Step 4: the prompt's tokens and prefix keys (approximate tokens if the tokenizer fails), the cache index
   * lookup, and each candidate's predicted time to first token.
   */
  private void lookUpCache(DecisionScratch s) {
    TokenizedPrompt prompt;
    try {
      prompt = s.request.tokenize(tokenizer);
    } catch (TokenizationException | RuntimeException e) {
      log.warn("Tokenizer {} failed, routing with approximate tokens: {}", tokenizer.name(), e.toString());
      s.note("tokenizer " + tokenizer.name() + " failed (" + e.getMessage() + "); used approximate");
      try {
        prompt = s.request.tokenize(fallbackTokenizer);
      } catch (TokenizationException impossible) {
        throw new IllegalStateException(impossible);
      }
    }
    s.prompt = prompt;
    int n = s.candidates;
    RoutingContext ctx = s.context;
    ctx.reset(s.request, prompt, s.now, random != null ? random : ThreadLocalRandom.current(), saturation);
    ctx.setCount(n);
    EndpointState[] ctxCand = ctx.candidateArray();
    System.arraycopy(s.filtered, 0, ctxCand, 0, n);
    lookup(s, ctx, prompt, n);
    for (int i = 0; i < n; i++) {
      ctx.setPredictedTtft(i, ttftModel.predictSeconds(ctxCand[i], ctx.uncachedTokens(i), ctx.blockSize(i)));
    }
  }

  /** Step 5: the profile of the request's model scores every candidate; the totals are the weighted sums. */
  private void score(DecisionScratch s) {
    ProfileScorers scoring = scoringFor(s.request.model());
    s.scoring = scoring;
    int n = s.candidates;
    double[] totals = s.totals;
    Arrays.fill(totals, 0, n, 0.0);
    for (int k = 0; k < scoring.scorers.length; k++) {
      double[] sc = s.scorerScores[k];
      if (n > 0) {
        scoring.scorers[k].score(s.context, sc);
      }
      double w = scoring.weights[k];
      for (int i = 0; i < n; i++) {
        totals[i] += w * sc[i];
      }
    }
  }

  /**
   * Step 6: the picker chooses among the candidates; the next best follow as alternates, and the policy's fallbacks
   * go last (or first, when the policy prefers them). The decision counts the request against the chosen endpoint
   * when {@code account} is set.
   */
  private RoutingDecision pick(DecisionScratch s, boolean account) {
    RoutingContext ctx = s.context;
    EndpointState[] ctxCand = ctx.candidateArray();
    ProfileScorers scoring = s.scoring;
    int scorerCount = scoring.scorers.length;
    int n = s.candidates;
    int fallbackCount = s.fallbackCount;
    double[] totals = s.totals;
    int localRanked = n == 0 ? 0 : Math.min(n, 1 + maxAlternates);
    int rankedCount = localRanked + fallbackCount;
    EndpointState[] ranked = new EndpointState[rankedCount];
    int[] cached = new int[rankedCount];
    double[] ttft = new double[rankedCount];
    double[] rankedTotals = new double[rankedCount];
    double[] rankedScores = new double[rankedCount * scorerCount];
    int localStart = s.preferFallbacks ? fallbackCount : 0;
    int fallbackStart = s.preferFallbacks ? 0 : localRanked;
    if (n > 0) {
      boolean[] taken = s.taken;
      Arrays.fill(taken, 0, n, false);
      int pick = picker.pick(totals, n, ctx.random());
      s.chosenCandidate = localStart == 0 ? pick : -1;
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
        for (int k = 0; k < scorerCount; k++) {
          rankedScores[row * scorerCount + k] = s.scorerScores[k][pick];
        }
      }
    }
    for (int f = 0; f < fallbackCount; f++) {
      int row = fallbackStart + f;
      EndpointState e = Objects.requireNonNull(s.fallbacks)[f];
      ranked[row] = e;
      cached[row] = 0;
      ttft[row] = ttftModel.predictSeconds(e, s.prompt.tokenCount(), defaultBlockSize);
      rankedTotals[row] = Double.NaN;
      Arrays.fill(rankedScores, row * scorerCount, (row + 1) * scorerCount, Double.NaN);
    }
    if (s.preferFallbacks && fallbackCount > 0) {
      s.note("policy prefers fallbacks: local capacity saturated");
    }
    List<String> notes = s.notes;
    return new RoutingDecision(this, s.request, ranked, rankedCount, 0, cached, ttft, rankedTotals, rankedScores,
        scoring.names, s.prompt.tokenCount(), s.trace, notes == null ? List.of() : notes, account, s.now);
  }

  /**
   * Step 7, for a decision that counts (its endpoint's load was counted when it was made): the cache index learns
   * where the prompt went, and the scorers that keep state (session affinity) learn the choice.
   */
  private void account(DecisionScratch s, RoutingDecision decision) {
    EndpointState chosen = decision.endpointState();
    if (!chosen.endpoint().isExternal()) {
      cacheIndex.onRouted(chosen, s.prompt.keys(chosen.blockSize(defaultBlockSize)), s.request.promptRetention());
    }
    if (s.chosenCandidate >= 0) {
      for (Scorer scorer : s.scoring.scorers) {
        scorer.onRouted(s.context, s.chosenCandidate);
      }
    }
  }

  private ProfileScorers scoringFor(String model) {
    if (scoringByModel.isEmpty()) {
      return defaultScoring;
    }
    ProfileScorers p = scoringByModel.get(model);
    return p != null ? p : defaultScoring;
  }

  /** Cached blocks per candidate, with one index lookup per distinct block size among the candidates. */
  private void lookup(DecisionScratch s, RoutingContext ctx, TokenizedPrompt prompt, int n) {
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
    /** Scorers added one at a time: an instance, or a type with its validated parameters to instantiate. */
    private final List<Object> scorers = new ArrayList<>();
    private final List<Double> weights = new ArrayList<>();
    private @Nullable RoutingProfile profile;
    private int routerReplicas = 1;
    private final Map<String, RoutingProfile> profilesByModel = new LinkedHashMap<>();
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
     * Adds a scorer with a weight. The first call replaces the default profile ({@link RoutingProfile#defaults}). A
     * scorer instance serves one router: several keep state about the router's fleet.
     */
    public Builder scorer(Scorer scorer, double weight) {
      Objects.requireNonNull(scorer, "scorer");
      checkWeight(weight);
      addScorer(scorer.name(), scorer, weight);
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
      checkWeight(weight);
      Scorer factory = scorerPlugins().require(name);
      addScorer(name, new RoutingProfile.WeightedScorer(name, weight,
          Parameters.of(factory.declaredParameters(), parameters).asMap()), weight);
      return this;
    }

    /**
     * Scores with this profile instead of the default one; exclusive with {@link #scorer}.
     *
     * @throws IllegalArgumentException naming every unknown scorer type and bad parameter
     */
    public Builder profile(RoutingProfile profile) {
      this.profile = Objects.requireNonNull(profile, "profile").resolve(scorerPlugins());
      return this;
    }

    /**
     * Scores the requests for {@code model} (as the policy engine leaves the request) with this profile; the other
     * requests keep the router's profile. A pool's own profile, as {@code kinference serve} configures it.
     *
     * @throws IllegalArgumentException naming every unknown scorer type and bad parameter
     */
    public Builder profile(String model, RoutingProfile profile) {
      Objects.requireNonNull(model, "model");
      profilesByModel.put(model, Objects.requireNonNull(profile, "profile").resolve(scorerPlugins()));
      return this;
    }

    private void addScorer(String name, Object scorer, double weight) {
      for (Object s : scorers) {
        String existing = s instanceof Scorer sc ? sc.name() : ((RoutingProfile.WeightedScorer) s).type();
        if (existing.equals(name)) {
          throw new IllegalArgumentException("scorer '" + name + "' added twice");
        }
      }
      scorers.add(scorer);
      weights.add(weight);
    }

    private static void checkWeight(double weight) {
      if (!(weight > 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("weight must be positive and finite: " + weight);
      }
    }

    PluginSet<Scorer> scorerPlugins() {
      PluginSet<Scorer> known = scorerPlugins;
      if (known == null) {
        known = Plugins.load(Scorer.class);
        scorerPlugins = known;
      }
      return known;
    }

    /** The router's own scorers: the ones added, the profile given, or the default profile. */
    ProfileScorers defaultScoring(boolean preciseCacheIndex) {
      RoutingProfile given = profile;
      if (given != null) {
        return ProfileScorers.create(given, scorerPlugins(), ticker);
      }
      if (scorers.isEmpty()) {
        return ProfileScorers.create(RoutingProfile.defaults(preciseCacheIndex, routerReplicas), scorerPlugins(),
            ticker);
      }
      List<Scorer> instances = new ArrayList<>(scorers.size());
      for (Object s : scorers) {
        if (s instanceof Scorer scorer) {
          instances.add(scorer);
        } else {
          RoutingProfile.WeightedScorer entry = (RoutingProfile.WeightedScorer) s;
          Scorer factory = scorerPlugins().require(entry.type());
          instances.add(factory.create(Parameters.of(factory.declaredParameters(), entry.parameters()), ticker));
        }
      }
      return new ProfileScorers(instances, weights);
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
      if (profile != null && !scorers.isEmpty()) {
        throw new IllegalStateException("give either scorers one by one or a profile, not both");
      }
      if (fleet != null && endpointSource != null && !fleet.endpoints().isEmpty()) {
        throw new IllegalStateException("give either a populated fleet or an endpoint source, not both");
      }
      return new Router(this);
    }
  }
}
