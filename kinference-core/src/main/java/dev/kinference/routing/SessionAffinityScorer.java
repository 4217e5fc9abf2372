package dev.kinference.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import java.time.Duration;

/**
 * Keeps a conversation where it started, and starts it where it has room to grow. A request of a known session
 * scores 1 on the endpoint its session last went to, while that endpoint is healthy and not saturated, and 0
 * elsewhere. A request opening a session scores each endpoint's KV headroom, {@code 1 - kv_cache_usage_perc} as
 * scraped (1 when unknown): its history will accumulate wherever it lands. A request without a session id, or of a
 * session whose endpoint is saturated or gone, scores 0 everywhere (neutral).
 *
 * <p>Sessions are remembered for 30 minutes after last use, at most 1,000,000 of them. Thread-safe.
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
    String session = context.request().sessionId();
    if (session == null) {
      return;
    }
    String endpointId = sessions.getIfPresent(session);
    if (endpointId == null) {
      // A conversation's history stays on the endpoint of its first turn; placed by the first turn's TTFT alone,
      // conversations piled onto one endpoint's cache while another's sat half empty (docs/BENCHMARKS.md, tenant mix).
      for (int i = 0; i < n; i++) {
        EndpointMetrics m = context.candidate(i).metrics();
        double usage = m == null || Double.isNaN(m.kvUsage()) ? 0 : Math.max(0, Math.min(1, m.kvUsage()));
        scores[i] = 1 - usage;
      }
      return;
    }
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

  @Override
  public void onRouted(RoutingContext context, int chosen) {
    String session = context.request().sessionId();
    if (session != null) {
      sessions.put(session, context.candidate(chosen).id());
    }
  }

  /** The endpoint a session is bound to, or null. */
  public @org.jspecify.annotations.Nullable String endpointOf(String sessionId) {
    return sessions.getIfPresent(sessionId);
  }
}
