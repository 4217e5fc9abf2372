/**
 * The routing decision, in one place.
 *
 * <p>{@link dev.kinference.routing.Router#route} runs, in this order:
 * <ol>
 *   <li>the {@link dev.kinference.policy.PolicyEngine}, if any: it may reject the request, rewrite it (model alias,
 *       cheaper model, priority), restrict the candidate endpoints and name fallbacks;</li>
 *   <li>candidates: the fleet members serving the request's model (or those the policy selected), minus draining
 *       ones;</li>
 *   <li>{@link dev.kinference.routing.Filter}s, each failing open: a filter that would reject every candidate is
 *       skipped and the decision notes it;</li>
 *   <li>the {@link dev.kinference.cache.CacheIndex} lookup: cached prefix blocks per candidate, hence cached and
 *       uncached prompt tokens and the {@link dev.kinference.routing.TtftModel}'s predicted time to first token;</li>
 *   <li>{@link dev.kinference.routing.Scorer}s, each giving every candidate a score in [0, 1], combined as a
 *       weighted sum;</li>
 *   <li>the {@link dev.kinference.routing.Picker}: the highest total, near-ties broken at random; the rest ranked
 *       as alternates for retries;</li>
 *   <li>accounting: the chosen endpoint's live load, the cache index (approximate indexes learn here) and the
 *       scorers' own state (session affinity) are updated before the decision is returned.</li>
 * </ol>
 *
 * <p>The default profile is {@code predicted-ttft} (weight 1), {@code prefix-overlap} (weight 1), {@code
 * kv-utilization} with a knee at half-full caches (weight 0.5), {@code session-affinity} (weight 1; a session's
 * first request scores KV headroom instead), {@code queue-depth} (weight 0.3; a request sent since the last scrape
 * counts a quarter of one the server reported waiting), {@code prefix-under-saturation} (weight 4: prefix overlap
 * again, counted only while every candidate is saturated) and, with a precise cache index, {@code prefix-home}
 * (weight 1: while every candidate is saturated, a prompt of at least a fiftieth of a server's cache that no
 * candidate holds goes back where the router last sent it; an approximate index remembers that itself), filters
 * {@code healthy} and {@code fresh-metrics}, picker {@code max-score}. The predicted time to first token ranks
 * servers for this request; prefix overlap keeps a prefix on the servers that hold it rather than duplicating it
 * onto a server that is momentarily faster (which evicts other prefixes there: with a shared-prefix working set
 * larger than one server's cache, predicted TTFT alone lost 20-35% of goodput to cache-aware routers in the
 * simulator's benchmark); KV headroom steers away from caches close to full, where requests wait for memory and
 * servers preempt. Below half-full it scores every endpoint alike: there llm-d's linear {@code 1 - usage} only added
 * noise to the prediction and cost unique prompts 4% of goodput (a session's first request is the exception, below).
 * The prefill rate behind the TTFT prediction is learned once per model and hardware, not per server, and only from
 * requests that found no queue; the queue term, light, replaces the load feedback that per-server learning used to
 * give by accident. It trusts the queue a server reports over the router's own sends since the scrape: most of those
 * are admitted at the server's next step, the TTFT prediction already counts their prefill, and counted in full they
 * made each server that had just been sent a request look queued, bunching closed-loop arrivals (5% of goodput on
 * unique prompts). Once the whole fleet is saturated a miss's prefill also delays every request queued behind it,
 * which one request's predicted TTFT does not count; there cache hits weigh five times as much, and a long prompt
 * that no server holds any more goes back where it was last sent: placed by load, each group of long prompts spread
 * over every server, the requests running on a server then needed more distinct prefixes than its cache holds, and
 * the fleet ran out of KV memory. A conversation's history grows on the server of its first turn, so session
 * affinity places that turn by KV headroom over the whole range, not only above the knee: placed by its TTFT alone,
 * conversations piled onto one server's cache (see docs/BENCHMARKS.md).
 */
@NullMarked
package dev.kinference.routing;

import org.jspecify.annotations.NullMarked;
