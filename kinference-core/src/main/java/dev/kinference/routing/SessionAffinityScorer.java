package dev.kinference.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.endpoint.EndpointState;
import java.time.Duration;

/**
 * Keeps a conversation where it started, and starts it where it has room to grow. A request of a known session
 * scores 1 on the endpoint its session last went to and 0 elsewhere; if that endpoint is saturated, all score 0
 * (neutral). A request opening a session, or of a session whose endpoint is no longer a candidate, scores each
 * endpoint's KV headroom, {@code 1 - kv_cache_usage_perc} as scraped, clamped to [0, 1] (1 when unknown): its
 * history will accumulate wherever it lands. A request without a session id scores 0 everywhere.
 *
 * <p>A session is keyed by its tenant and its id, so tenants never share one. Sessions are remembered for 30 minutes
 * after last use, at most 1,000,000 of them. Thread-safe.
 */
public final class SessionAffinityScorer implements Scorer {

  private final Cache<String, String> sessions;

  /** The default: 30 minutes, 1,000,000 sessions. */
  public SessionAffinityScorer() {
    this(Duration.ofMinutes(30), 1_000_000);
  }

  public SessionAffinityScorer(Duration idleExpiry, long maxSessions) {
    if (idleExpiry.isNegative() || idleExpiry.isZero()) {
      throw new IllegalArgumentException("idleExpiry must be positive: " + idleExpiry);
    }
    if (maxSessions < 1) {
      throw new IllegalArgumentException("maxSessions must be positive: " + maxSessions);
    }
    this.sessions = Caffeine.newBuilder().expireAfterAccess(idleExpiry).maximumSize(maxSessions).build();
  }

  @Override
  public String name() {
    return "session-affinity";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    java.util.Arrays.fill(scores, 0, n, 0.0);
    String session = key(context.request());
    if (session == null) {
      return;
    }
    String endpointId = sessions.getIfPresent(session);
    if (endpointId != null) {
      for (int i = 0; i < n; i++) {
        EndpointState e = context.candidate(i);
        if (e.id().equals(endpointId)) {
          if (!context.saturation().isSaturated(e, context.nowNanos())) {
            scores[i] = 1.0;
          }
          return;
        }
      }
    }
    // A new session, or one whose endpoint (and with it the history) is out of reach: its history will grow on the
    // endpoint this request lands on. Placed by the first turn's TTFT alone, conversations piled onto one endpoint's
    // cache while another's sat half empty (docs/BENCHMARKS.md, tenant mix).
    for (int i = 0; i < n; i++) {
      scores[i] = 1 - context.candidate(i).kvUsage();
    }
  }

  @Override
  public void onRouted(RoutingContext context, int chosen) {
    String session = key(context.request());
    if (session != null) {
      sessions.put(session, context.candidate(chosen).id());
    }
  }

  /**
   * A session is its tenant's: two tenants that send the same hint (the same {@code user} value, say) are two
   * sessions.
   */
  private static @org.jspecify.annotations.Nullable String key(dev.kinference.request.InferenceRequest request) {
    String session = request.sessionId();
    String tenant = request.tenant();
    return session == null || tenant == null ? session : tenant + '\u0000' + session;
  }

  /** The endpoint a session of no tenant is bound to, or null. */
  public @org.jspecify.annotations.Nullable String endpointOf(String sessionId) {
    return sessions.getIfPresent(sessionId);
  }

  /** The endpoint a tenant's session is bound to, or null. */
  public @org.jspecify.annotations.Nullable String endpointOf(String tenant, String sessionId) {
    return sessions.getIfPresent(tenant + '\u0000' + sessionId);
  }
}
