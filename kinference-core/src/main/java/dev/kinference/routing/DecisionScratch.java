package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A thread's working state for routing decisions: the arrays a decision works in, so it allocates only what it
 * returns, and the decision in progress, handed from {@link Router}'s steps one to the next. Used by one thread at a
 * time.
 *
 * <p>One per thread for every router ({@link #acquire}), and it holds nothing of a router or a request once the
 * decision returns: a scratch per router and thread (an instance {@link ThreadLocal}) kept every router a thread had
 * served reachable from that thread, as its scorers' clock led back to the router, so {@code kinference bench
 * --repeat} kept every run's whole simulated fleet and ran out of heap.
 */
final class DecisionScratch {

  private static final ThreadLocal<DecisionScratch> PER_THREAD = ThreadLocal.withInitial(DecisionScratch::new);
  /** What an idle scratch holds instead of the last request. */
  private static final InferenceRequest PLACEHOLDER =
      InferenceRequest.builder("placeholder").user("placeholder").build();
  private static final TokenizedPrompt PLACEHOLDER_PROMPT =
      TokenizedPrompt.of(new ApproximateTokenizer(), new int[] {0}, PLACEHOLDER);

  final RoutingContext context;
  /** Whether a decision is in progress on it (a decision made within another gets a scratch of its own). */
  private boolean busy;
  EndpointState[] filtered = new EndpointState[16];
  EndpointState[] subset = new EndpointState[16];
  int[] subsetIndex = new int[16];
  int[] subsetMatched = new int[16];
  double[] totals = new double[16];
  double[][] scorerScores;
  boolean[] taken = new boolean[16];

  // the decision in progress
  long now;
  InferenceRequest request;
  @Nullable Predicate<EndpointState> selector;
  List<String> fallbackIds = List.of();
  boolean preferFallbacks;
  List<String> trace = List.of();
  @Nullable List<String> notes;
  List<EndpointState> pool = List.of();
  int candidates;
  EndpointState @Nullable [] fallbacks;
  int fallbackCount;
  int chosenCandidate;
  TokenizedPrompt prompt;
  /** The profile scoring this decision, from the scoring step on. */
  @Nullable ProfileScorers scoring;

  DecisionScratch() {
    this.context = new RoutingContext(PLACEHOLDER, PLACEHOLDER_PROMPT, ThreadLocalRandom.current());
    this.scorerScores = new double[0][];
    this.request = PLACEHOLDER;
    this.prompt = PLACEHOLDER_PROMPT;
  }

  /**
   * The calling thread's scratch, begun for a decision on {@code original} with up to {@code scorerCount} scorers;
   * hand it to {@link #end} when the decision returns.
   */
  static DecisionScratch acquire(InferenceRequest original, long nowNanos, int scorerCount) {
    DecisionScratch s = PER_THREAD.get();
    if (s.busy) {
      s = new DecisionScratch();
    }
    s.begin(original, nowNanos, scorerCount);
    return s;
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

  /** Starts a decision: nothing of the previous one is left. */
  private void begin(InferenceRequest original, long nowNanos, int scorerCount) {
    busy = true;
    if (scorerScores.length < scorerCount) {
      double[][] more = Arrays.copyOf(scorerScores, scorerCount);
      for (int k = scorerScores.length; k < scorerCount; k++) {
        more[k] = new double[filtered.length];
      }
      scorerScores = more;
    }
    now = nowNanos;
    request = original;
    selector = null;
    fallbackIds = List.of();
    preferFallbacks = false;
    trace = List.of();
    notes = null;
    pool = List.of();
    candidates = 0;
    fallbacks = null;
    fallbackCount = 0;
    chosenCandidate = -1;
  }

  /**
   * Drops every reference the finished decision held (its request, endpoints, scorers, random source), so an idle
   * thread keeps no request and no router alive.
   */
  void end() {
    request = PLACEHOLDER;
    prompt = PLACEHOLDER_PROMPT;
    selector = null;
    fallbackIds = List.of();
    trace = List.of();
    notes = null;
    pool = List.of();
    fallbacks = null;
    scoring = null;
    Arrays.fill(filtered, null);
    Arrays.fill(subset, null);
    context.release(PLACEHOLDER, PLACEHOLDER_PROMPT);
    busy = false;
  }

  void note(String note) {
    List<String> out = notes;
    if (out == null) {
      out = new ArrayList<>(2);
      notes = out;
    }
    out.add(note);
  }
}
