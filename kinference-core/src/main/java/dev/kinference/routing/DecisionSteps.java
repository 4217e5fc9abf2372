package dev.kinference.routing;

import dev.kinference.cache.CacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.endpoint.Saturation;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Router}'s decision, as the numbered steps of {@link dev.kinference.routing the package documentation}, one
 * method each, handing the decision in progress from one to the next in a thread's {@link DecisionScratch}. Holds the
 * router's parts it decides with; thread-safe as {@link Router#route} is.
 */
final class DecisionSteps {

  // the router's logger, as before the steps had their own class: logging configurations name it
  private static final Logger log = LoggerFactory.getLogger(Router.class);

  private final Router router;
  private final Fleet fleet;
  private final CacheIndex cacheIndex;
  private final Tokenizer tokenizer;
  private final Tokenizer fallbackTokenizer;
  private final Filter[] filters;
  private final Picker picker;
  private final @Nullable PolicyEngine policyEngine;
  private final TtftModel ttftModel;
  private final Saturation saturation;
  private final int defaultBlockSize;
  private final int maxAlternates;
  private final LongSupplier ticker;
  private final @Nullable RandomGenerator random;
  private final int maxScorers;

  /** Steps over {@code router}'s parts, which it has set before it makes these. */
  DecisionSteps(Router router, int maxScorers) {
    this.router = router;
    this.fleet = router.fleet;
    this.cacheIndex = router.cacheIndex;
    this.tokenizer = router.tokenizer;
    this.fallbackTokenizer = router.fallbackTokenizer;
    this.filters = router.filters;
    this.picker = router.picker;
    this.policyEngine = router.policyEngine;
    this.ttftModel = router.ttftModel;
    this.saturation = router.saturation;
    this.defaultBlockSize = router.defaultBlockSize;
    this.maxAlternates = router.maxAlternates;
    this.ticker = router.ticker;
    this.random = router.random;
    this.maxScorers = maxScorers;
  }

  /** One decision: the steps of the package documentation, in order, one method each. */
  RoutingDecision decide(InferenceRequest original, boolean account, @Nullable Predicate<Endpoint> within) {
    DecisionScratch s = DecisionScratch.acquire(original, ticker.getAsLong(), maxScorers);
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
      s.end();
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
      throw NoEndpointException.none(s.request.model(), s.selector == null && s.pool.isEmpty(), snap);
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
      ctx.setPredictedTtft(i, ttftModel.predictSeconds(ctxCand[i], ctx.uncachedTokens(i), ctx.cachedTokens(i),
          ctx.blockSize(i)));
    }
  }

  /** Step 5: the profile of the request's model scores every candidate; the totals are the weighted sums. */
  private void score(DecisionScratch s) {
    ProfileScorers scoring = router.scoringFor(s.request.model());
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
    ProfileScorers scoring = Objects.requireNonNull(s.scoring);
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
    return new RoutingDecision(router, s.request, ranked, rankedCount, 0, cached, ttft, rankedTotals, rankedScores,
        scoring.names, s.prompt.tokenCount(), s.trace, notes == null ? List.of() : notes, account, s.now);
  }

  /**
   * Step 7, for a decision that counts (its endpoint's load was counted when it was made): the cache index learns
   * where the prompt went, and the scorers that keep state (session affinity) learn the choice.
   */
  private void account(DecisionScratch s, RoutingDecision decision) {
    EndpointState chosen = decision.endpointState();
    if (!chosen.endpoint().isExternal()) {
      PrefixKeys keys = s.prompt.keys(chosen.blockSize(defaultBlockSize));
      cacheIndex.onRouted(chosen, keys, s.request.promptRetention());
      if (cacheIndex.isPrecise()) {
        decision.holdUntilFirstReport(keys); // held there before its events say so, until the first report
      }
    }
    if (s.chosenCandidate >= 0) {
      for (Scorer scorer : Objects.requireNonNull(s.scoring).scorers) {
        scorer.onRouted(s.context, s.chosenCandidate);
      }
    }
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
}
