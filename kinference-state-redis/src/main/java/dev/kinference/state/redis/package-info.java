/**
 * A {@link dev.kinference.policy.limits.RateLimitStore} on Redis or Valkey. Each request step is one server-side
 * script: reserve (every limit checked and counted at once), settle (corrections, lease release and usage totals),
 * and a periodic lease renewal. Windows and periods are computed from the server's clock ({@code TIME}).
 *
 * <p>Keys, under a prefix ({@code kinference:} by default): one hash per sliding-window counter (61 buckets, each
 * 1/60 of the window, expiring after the window), one hash per budget ({@code start}, {@code total}; expiring a day
 * after its period), one sorted set of leases per concurrency counter, and one hash per tenant and hour, day and
 * month of usage totals ({@code usage:TENANT:day:START}, fields {@code MODEL|input} and so on), kept 40 days,
 * 400 days and 5 years. Gateway replicas share their pending prefill tokens in one hash per endpoint ({@code
 * inflight:ENDPOINT}, a field per replica holding {@code TOKENS|EXPIRES_AT}), written and read in one script per
 * scrape interval; a replica's field lapses a few intervals after its last write.
 */
@NullMarked
package dev.kinference.state.redis;

import org.jspecify.annotations.NullMarked;
