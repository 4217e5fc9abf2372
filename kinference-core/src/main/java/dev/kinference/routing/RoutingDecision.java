package dev.kinference.routing;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.PromptsAwaitingFirstToken;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Where a request goes and why: the chosen endpoint, ranked alternates for retries, the cached prefix expected,
 * the predicted time to first token, and each scorer's part.
 *
 * <p>A decision returned by {@link Router#route} is also the request's account with the router: the chosen
 * endpoint's load already counts it. Report its progress with {@link #reportFirstToken()}, then exactly one of
 * {@link #reportFinished(Usage)} or {@link #reportFailed()} (or move it with {@link #retryOnNextAlternate()}); the
 * TTFT model learns from the first token, load is released at the end, and the server's usage report corrects the
 * endpoint's estimate of the prefill a request brings. Reports are idempotent and
 * thread-safe: the first report of each kind counts. A decision from {@link Router#preview} is not accounted and
 * its reports do nothing.
 */
public final class RoutingDecision {

  private static final int DISPATCHED = 0;
  private static final int FIRST_TOKEN = 1;
  private static final int ENDED = 2;

  private final Router router;
  private final InferenceRequest request;
  private final EndpointState[] ranked;
  private final int rankedCount;
  private final int position;
  private final int[] cachedTokens;
  private final double[] predictedTtft;
  private final double[] totals;
  private final double[] scores; // ranked x scorers, row-major
  private final String[] scorerNames; // shared with the router's profile: never written
  private final int promptTokens;
  private final List<String> policyTrace;
  private final List<String> notes;
  private final boolean accounted;
  private final long dispatchedAtNanos;
  private final long generation;
  private final long pendingPrefillAtDispatch;
  private final int runningAtDispatch;
  private final int waitingAtDispatch;
  private final AtomicInteger state = new AtomicInteger(DISPATCHED);
  /** The prompt's keys while its endpoint counts them as held, and the token they are held under there. */
  private volatile @Nullable PrefixKeys heldKeys;
  private volatile @Nullable Object heldToken;

  RoutingDecision(Router router, InferenceRequest request, EndpointState[] ranked, int rankedCount, int position,
      int[] cachedTokens, double[] predictedTtft, double[] totals, double[] scores, String[] scorerNames,
      int promptTokens, List<String> policyTrace, List<String> notes, boolean accounted, long nowNanos) {
    this.router = router;
    this.request = request;
    this.ranked = ranked;
    this.rankedCount = rankedCount;
    this.position = position;
    this.cachedTokens = cachedTokens;
    this.predictedTtft = predictedTtft;
    this.totals = totals;
    this.scores = scores;
    this.scorerNames = scorerNames;
    this.promptTokens = promptTokens;
    this.policyTrace = policyTrace;
    this.notes = notes;
    this.accounted = accounted;
    this.dispatchedAtNanos = nowNanos;
    EndpointState chosen = ranked[position];
    if (accounted) {
      this.pendingPrefillAtDispatch = chosen.estimatedPendingPrefillTokens();
      this.runningAtDispatch = chosen.estimatedRunning();
      this.waitingAtDispatch = chosen.estimatedWaiting();
      this.generation = chosen.onDispatched(uncachedTokens());
    } else {
      this.pendingPrefillAtDispatch = 0;
      this.runningAtDispatch = 0;
      this.waitingAtDispatch = 0;
      this.generation = 0;
    }
  }

  /** The request as routed (after any policy rewrite). */
  public InferenceRequest request() {
    return request;
  }

  /** The chosen endpoint. */
  public Endpoint endpoint() {
    return ranked[position].endpoint();
  }

  /** The chosen endpoint's state. */
  public EndpointState endpointState() {
    return ranked[position];
  }

  /** Endpoints to try next if the chosen one fails before answering, best first (policy fallbacks last). */
  public List<Endpoint> alternates() {
    List<Endpoint> out = new ArrayList<>(rankedCount - position - 1);
    for (int i = position + 1; i < rankedCount; i++) {
      out.add(ranked[i].endpoint());
    }
    return out;
  }

  /** Prompt tokens, as tokenized for routing. */
  public int promptTokens() {
    return promptTokens;
  }

  /** Prompt tokens the chosen endpoint is expected to serve from its prefix cache. */
  public int cachedPrefixTokens() {
    return cachedTokens[position];
  }

  /** Prompt tokens the chosen endpoint is expected to prefill. */
  public int uncachedTokens() {
    return promptTokens - cachedTokens[position];
  }

  /** The predicted time to first token on the chosen endpoint. */
  public Duration predictedTtft() {
    return Duration.ofNanos((long) (predictedTtft[position] * 1e9));
  }

  /** The chosen endpoint and alternates with their scores, best first. */
  public List<CandidateScore> breakdown() {
    String[] names = scorerNames;
    List<CandidateScore> out = new ArrayList<>(rankedCount - position);
    for (int r = position; r < rankedCount; r++) {
      Map<String, Double> s = new LinkedHashMap<>();
      for (int k = 0; k < names.length; k++) {
        s.put(names[k], scores[r * names.length + k]);
      }
      out.add(new CandidateScore(ranked[r].endpoint(), totals[r], s, cachedTokens[r], predictedTtft[r]));
    }
    return out;
  }

  /** The policy rules that matched, in order; empty without a policy engine. */
  public List<String> policyTrace() {
    return policyTrace;
  }

  /** Anything unusual about this decision: filters that failed open, tokenizer fallback, policy fallback. */
  public List<String> notes() {
    return notes;
  }

  /** A one-line explanation for logs and debug headers. */
  public String explain() {
    StringBuilder sb = new StringBuilder();
    sb.append(endpoint().id()).append(" cached=").append(cachedPrefixTokens()).append('/').append(promptTokens)
        .append(String.format(Locale.ROOT, " ttft=%.3fs", predictedTtft[position]));
    String[] names = scorerNames;
    for (int r = position; r < rankedCount; r++) {
      sb.append(r == position ? " [" : " | ").append(ranked[r].id())
          .append(String.format(Locale.ROOT, " total=%.3f", totals[r]));
      for (int k = 0; k < names.length; k++) {
        sb.append(' ').append(names[k]).append('=')
            .append(String.format(Locale.ROOT, "%.3f", scores[r * names.length + k]));
      }
    }
    sb.append(']');
    if (!notes.isEmpty()) {
      sb.append(" notes=").append(notes);
    }
    return sb.toString();
  }

  /** The first token arrived: the TTFT model learns from it and the request stops counting as queued. */
  public void reportFirstToken() {
    if (accounted && state.compareAndSet(DISPATCHED, FIRST_TOKEN)) {
      EndpointState e = ranked[position];
      release(e);
      e.onFirstToken(uncachedTokens(), generation);
      router.ttftModel().learn(e, pendingPrefillAtDispatch + uncachedTokens(), uncachedTokens(),
          cachedPrefixTokens(), runningAtDispatch, waitingAtDispatch, router.nanoTime() - dispatchedAtNanos);
    }
  }

  /**
   * The request completed; {@code usage} is what the server reported (or {@link Usage#UNKNOWN}). The load is
   * released, and the prefill work the server reported, its prompt tokens (the router's tokenizer may be
   * approximate) less those it served from its cache, corrects the endpoint's estimate of the prefill a request
   * brings ({@link EndpointState#onPrefillReported}), which prices the queue it reports. A server that reports no
   * cached tokens may not report them at all, so the router's expectation of the cached prefix stands then.
   */
  public void reportFinished(Usage usage) {
    end(true, usage);
  }

  /** The request failed or was cancelled. */
  public void reportFailed() {
    end(false, Usage.UNKNOWN);
  }

  /**
   * Reports this attempt failed and dispatches the request to the next alternate, or returns null if there is
   * none. Only meaningful before the first token reached the client.
   */
  public @Nullable RoutingDecision retryOnNextAlternate() {
    reportFailed();
    if (position + 1 >= rankedCount) {
      return null;
    }
    RoutingDecision next = new RoutingDecision(router, request, ranked, rankedCount, position + 1, cachedTokens,
        predictedTtft, totals, scores, scorerNames, promptTokens, policyTrace, notes, accounted, router.nanoTime());
    PrefixKeys keys = heldKeys;
    if (keys != null && !next.endpointState().endpoint().isExternal()
        && next.endpointState().blockSize(keys.blockSize()) == keys.blockSize()) {
      next.holdUntilFirstReport(keys);
    }
    return next;
  }

  /**
   * Counts the prompt's {@code keys} as held on the chosen endpoint until this decision's first report (a precise
   * index reads them: {@link dev.kinference.endpoint.PromptsAwaitingFirstToken}); a retry on the next alternate
   * moves them there. Only a prompt long enough to be credited is held, and under a token of its own, so a decision
   * its caller never reports keeps no more than its keys alive.
   */
  void holdUntilFirstReport(PrefixKeys keys) {
    if (!accounted || !PromptsAwaitingFirstToken.canCredit(keys) || state.get() != DISPATCHED) {
      return;
    }
    Object token = new Object();
    heldKeys = keys;
    heldToken = token;
    ranked[position].promptsAwaitingFirstToken().add(token, keys);
  }

  private void release(EndpointState e) {
    Object token = heldToken;
    if (token != null) {
      e.promptsAwaitingFirstToken().remove(token);
    }
  }

  /** Whether {@link #reportFinished} or {@link #reportFailed} was called. */
  public boolean isEnded() {
    return state.get() == ENDED;
  }

  private void end(boolean succeeded, Usage usage) {
    if (!accounted) {
      state.set(ENDED);
      return;
    }
    int previous = state.getAndSet(ENDED);
    if (previous == ENDED) {
      return;
    }
    EndpointState e = ranked[position];
    if (previous != FIRST_TOKEN) {
      release(e);
    }
    e.onFinished(previous == FIRST_TOKEN, uncachedTokens(), generation, succeeded);
    if (usage.promptTokens() > 0) {
      e.onPrefillReported(uncachedTokens(), prefilledTokens(usage));
    }
  }

  /** The prompt tokens the server prefilled, by its usage report where it says, else as the router expected. */
  int prefilledTokens(Usage usage) {
    if (usage.promptTokens() == 0) {
      return uncachedTokens();
    }
    int cached = usage.cachedPromptTokens() > 0 ? usage.cachedPromptTokens() : cachedPrefixTokens();
    return Math.max(0, usage.promptTokens() - Math.min(cached, usage.promptTokens()));
  }

  @Override
  public String toString() {
    return "RoutingDecision[" + explain() + "]";
  }
}
