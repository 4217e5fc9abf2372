package dev.kinference.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

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

  /** {@code idleExpiry}: how long a session is remembered after its last request. */
  static final Parameter IDLE_EXPIRY = Parameter.positiveDuration("idleExpiry", Duration.ofMinutes(30),
      Duration.ofDays(7), "how long a session is remembered after its last request");

  /** {@code maxSessions}: the most sessions remembered; the least recently used beyond it are forgotten. */
  static final Parameter MAX_SESSIONS = Parameter.integer("maxSessions", 1_000_000, 1, 100_000_000,
      "the most sessions remembered at once");

  private final Cache<String, String> sessions;
  private final Parameters parameters;

  /** The default: 30 minutes, 1,000,000 sessions. */
  public SessionAffinityScorer() {
    this((Duration) IDLE_EXPIRY.defaultValue(), (Long) MAX_SESSIONS.defaultValue());
  }

  /** @throws IllegalArgumentException unless idleExpiry is positive (at most 7 days) and maxSessions is positive */
  public SessionAffinityScorer(Duration idleExpiry, long maxSessions) {
    Map<String, Object> given = new LinkedHashMap<>();
    given.put(IDLE_EXPIRY.name(), idleExpiry);
    given.put(MAX_SESSIONS.name(), maxSessions);
    this.parameters = Parameters.of(List.of(IDLE_EXPIRY, MAX_SESSIONS), given);
    this.sessions = Caffeine.newBuilder().expireAfterAccess(idleExpiry).maximumSize(maxSessions).build();
  }

  @Override
  public String name() {
    return "session-affinity";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(IDLE_EXPIRY, MAX_SESSIONS);
  }

  /** A new instance with its own sessions. */
  @Override
  public Scorer create(Parameters parameters, LongSupplier ticker) {
    return new SessionAffinityScorer(parameters.duration(IDLE_EXPIRY.name()), parameters.integer(MAX_SESSIONS.name()));
  }

  @Override
  public Parameters parameters() {
    return parameters;
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
   * The key sessions are remembered under, null without a session. A session is its tenant's: two tenants that send
   * the same hint (the same {@code user} value, say) are two sessions. Shared with {@link SessionResidencyScorer}.
   */
  static @org.jspecify.annotations.Nullable String key(dev.kinference.request.InferenceRequest request) {
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
