package dev.kinference.routing;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
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
 * TTFT model learns from the first token, and load is released at the end. Reports are idempotent and
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
  private final int promptTokens;
  private final List<String> policyTrace;
  private final List<String> notes;
  private final boolean accounted;
  private final long dispatchedAtNanos;
  private final long generation;
  private final long workTokens;
  private final int runningAtDispatch;
  private final int waitingAtDispatch;
  private final AtomicInteger state = new AtomicInteger(DISPATCHED);

  RoutingDecision(Router router, InferenceRequest request, EndpointState[] ranked, int rankedCount, int position,
      int[] cachedTokens, double[] predictedTtft, double[] totals, double[] scores, int promptTokens,
      List<String> policyTrace, List<String> notes, boolean accounted, long nowNanos) {
    this.router = router;
    this.request = request;
    this.ranked = ranked;
    this.rankedCount = rankedCount;
    this.position = position;
    this.cachedTokens = cachedTokens;
    this.predictedTtft = predictedTtft;
    this.totals = totals;
    this.scores = scores;
    this.promptTokens = promptTokens;
    this.policyTrace = policyTrace;
    this.notes = notes;
    this.accounted = accounted;
    this.dispatchedAtNanos = nowNanos;
    EndpointState chosen = ranked[position];
    if (accounted) {
      this.workTokens = chosen.estimatedPendingPrefillTokens() + uncachedTokens();
      this.runningAtDispatch = chosen.estimatedRunning();
      this.waitingAtDispatch = chosen.estimatedWaiting();
      this.generation = chosen.onDispatched(uncachedTokens());
    } else {
      this.workTokens = 0;
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
    String[] names = router.scorerNames();
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
    String[] names = router.scorerNames();
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
      e.onFirstToken(uncachedTokens(), generation);
      router.ttftModel().learn(e, workTokens, runningAtDispatch, waitingAtDispatch,
          router.nanoTime() - dispatchedAtNanos);
    }
  }

  /** The request completed; {@code usage} is what the server reported (or {@link Usage#UNKNOWN}). */
  public void reportFinished(Usage usage) {
    end(true);
  }

  /** The request failed or was cancelled. */
  public void reportFailed() {
    end(false);
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
    return new RoutingDecision(router, request, ranked, rankedCount, position + 1, cachedTokens, predictedTtft,
        totals, scores, promptTokens, policyTrace, notes, accounted, router.nanoTime());
  }

  /** Whether {@link #reportFinished} or {@link #reportFailed} was called. */
  public boolean isEnded() {
    return state.get() == ENDED;
  }

  private void end(boolean succeeded) {
    if (!accounted) {
      state.set(ENDED);
      return;
    }
    int previous = state.getAndSet(ENDED);
    if (previous != ENDED) {
      ranked[position].onFinished(previous == FIRST_TOKEN, uncachedTokens(), generation, succeeded);
    }
  }

  @Override
  public String toString() {
    return "RoutingDecision[" + explain() + "]";
  }
}
