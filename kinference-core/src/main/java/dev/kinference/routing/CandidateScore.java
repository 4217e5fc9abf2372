package dev.kinference.routing;

import dev.kinference.endpoint.Endpoint;
import java.util.Map;

/**
 * Why one candidate ranked where it did.
 *
 * @param endpoint the candidate
 * @param total the weighted sum of its scores ({@code NaN} for a policy fallback, which is not scored)
 * @param scores each scorer's score in [0, 1], by scorer name, in the router's scorer order
 * @param cachedTokens prompt tokens expected from its prefix cache
 * @param predictedTtftSeconds the TTFT model's prediction
 */
public record CandidateScore(Endpoint endpoint, double total, Map<String, Double> scores, int cachedTokens,
    double predictedTtftSeconds) {

  public CandidateScore {
    scores = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(scores));
  }
}
