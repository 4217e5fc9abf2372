/**
 * The routing decision, in one place.
 *
 * <p>{@link dev.kinference.routing.Router#route} runs, in this order, one method each of the package-private
 * {@code DecisionSteps} (the router's parts as one decision uses them; its working arrays in {@code DecisionScratch}):
 * <ol>
 *   <li>{@code applyPolicy}: the {@link dev.kinference.policy.PolicyEngine}, if any, may reject the request,
 *       rewrite it (model alias, cheaper model, priority), restrict the candidate endpoints and name fallbacks;</li>
 *   <li>{@code collectCandidates}: the fleet members serving the request's model (or those the policy selected),
 *       minus draining ones; after the filters, {@code resolveFallbacks} finds the policy's fallbacks in the
 *       fleet;</li>
 *   <li>{@code applyFilters}: the {@link dev.kinference.routing.Filter}s, each failing open: a filter that would
 *       reject every candidate is skipped and the decision notes it;</li>
 *   <li>{@code lookUpCache}: the {@link dev.kinference.cache.CacheIndex} lookup: cached prefix blocks per
 *       candidate, hence cached and uncached prompt tokens and the {@link dev.kinference.routing.TtftModel}'s
 *       predicted time to first token;</li>
 *   <li>{@code score}: the {@link dev.kinference.routing.RoutingProfile} of the request's model (or the router's
 *       own): its {@link dev.kinference.routing.Scorer}s each give every candidate a score in [0, 1], combined as a
 *       weighted sum;</li>
 *   <li>{@code pick}: the {@link dev.kinference.routing.Picker}: the highest total, near-ties broken at random; the
 *       rest ranked as alternates for retries;</li>
 *   <li>{@code account}: the chosen endpoint's live load, the cache index (approximate indexes learn here) and the
 *       scorers' own state (session affinity) are updated before the decision is returned.</li>
 * </ol>
 *
 * <p>{@link dev.kinference.routing.Router#rankByLoad}, for pooling and tokenizer requests, takes none of these steps
 * but the policy: {@code LoadRanking} orders the endpoints by load. A {@link dev.kinference.routing.Router.Builder}'s
 * scorers and profiles become the router's scoring in {@code ScoringSetup}.
 *
 * <p>The default profile ({@link dev.kinference.routing.RoutingProfile#defaults}) is {@code predicted-ttft} 1,
 * {@code prefix-overlap} 1, {@code kv-utilization} 0.5, {@code new-prefix-headroom} 1, {@code session-affinity} 1, {@code queue-depth} 0.3, {@code
 * prefix-under-saturation} 4, {@code session-residency} 4, {@code ttft-overflow} 16 and, with a precise cache index,
 * {@code prefix-home} 1, each with the default
 * parameters its type declares ({@link dev.kinference.routing.Scorer#declaredParameters}); filters {@code healthy}
 * and {@code fresh-metrics}; picker {@code max-score}. Why each scorer is there, with what weight and parameters,
 * and how to tune them, is docs/ROUTING.md.
 */
@NullMarked
package dev.kinference.routing;

import org.jspecify.annotations.NullMarked;
