package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A router's per-thread working state: the arrays a decision works in, so it allocates only what it returns, and the
 * decision in progress, handed from {@link Router}'s steps one to the next (cleared when the decision returns). Used
 * by one thread at a time.
 */
final class DecisionScratch {
  final RoutingContext context;
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
  ProfileScorers scoring;

  DecisionScratch(RoutingContext context, int scorerCount, ProfileScorers scoring) {
    this.context = context;
    this.scorerScores = new double[scorerCount][16];
    this.request = context.request();
    this.prompt = context.prompt();
    this.scoring = scoring;
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
  void begin(InferenceRequest original, long nowNanos) {
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

  /** Drops the references the finished decision held, so a request is not kept alive by an idle thread. */
  void end(InferenceRequest placeholder, TokenizedPrompt placeholderPrompt) {
    request = placeholder;
    prompt = placeholderPrompt;
    selector = null;
    fallbackIds = List.of();
    trace = List.of();
    notes = null;
    pool = List.of();
    fallbacks = null;
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
