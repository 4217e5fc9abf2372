package dev.kinference.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Keeps sessions resident on an endpoint whose live sessions' contexts outgrow its KV memory. The scorer remembers,
 * per session, the endpoint its last request went to and that request's prompt length (the context the endpoint
 * caches for it), and sums those per endpoint: the KV tokens the endpoint's live sessions commit. Each endpoint is
 * judged on its own, against {@code oversubscription} times its KV memory ({@code num_gpu_blocks} times {@code
 * block_size} as scraped), and only while at least half the candidates are saturated; then:
 *
 * <ul>
 *   <li>(at any load) a session's first request, one this scorer has not seen within 30 minutes and that is not a
 *       fork (below), scores 1 on the candidates whose sessions commit the smallest share of their memory (within
 *       0.1 of it) and 0 elsewhere, as SGLang's router sends a new prompt to the worker with the smallest tree: its
 *       later turns come back there, so it is placed by the contexts each endpoint must keep, not by momentary load;
 *   <li>a request of a session bound to a candidate whose commitment, grown by this prompt, exceeds that scores 1
 *       there and 0 elsewhere, saturated or not: waiting in that queue costs less than recomputing the whole context
 *       on another endpoint, whose own sessions it would then evict. A session whose endpoint still holds its
 *       sessions scores 0 everywhere and the other scorers decide;
 *   <li>a request of a session not remembered whose prompt is more than 80% cached on a candidate, and more there
 *       than on any other (a subagent forked from its parent's context), is judged as a session of that candidate,
 *       grown by
 *       its uncached tokens: taken for a new session, it went where it fit and recomputed its parent's context;
 *   <li>any other request (a known session whose residence lapsed after {@code idleExpiry}) scores 0 everywhere
 *       while its prompt fits beside the committed contexts of every candidate;
 *       once it does not fit on some, it scores, where it still fits, the share of that endpoint's KV memory left
 *       free; where it fits nowhere, 1 on the endpoint already the most oversubscribed and 0 elsewhere, so the
 *       sessions that cannot be held all wait on one endpoint instead of evicting the resident sessions of every
 *       endpoint.
 * </ul>
 *
 * Without this, a fleet whose live sessions needed more KV memory than it had thrashed: every endpoint evicted idle
 * sessions' contexts and recomputed them, and goodput fell to nearly 0. Judged over the candidates' total instead, it
 * held every session once the fleet's sum was exceeded, also on endpoints that still held theirs, and cost a fleet
 * that was still serving its sessions a fifth of its goodput (docs/ROUTING.md). Scores 0 everywhere when an
 * endpoint's KV memory is unknown. A session is keyed by tenant and id, remembered {@code idleExpiry} after its last
 * request on the router's clock. Thread-safe; the sums are updated without a lock and may lag by a request.
 */
public final class SessionResidencyScorer implements Scorer {

  /** {@code idleExpiry}: after how long without a request a session no longer counts as holding its context. */
  static final Parameter IDLE_EXPIRY = Parameter.positiveDuration("idleExpiry", Duration.ofSeconds(60),
      Duration.ofDays(1), "how long after its last request a session still counts as holding its context");

  /**
   * {@code oversubscription}: how many times an endpoint's KV memory its live sessions' contexts must commit before
   * the scorer holds them there. Contexts counted this way overstate what must be resident at once (a session between
   * turns can lose its cache and recompute a turn without the endpoint thrashing, and a session counts until {@code
   * idleExpiry} after its last request), so the scorer also waits until at least half the candidates are saturated.
   * 1.25 served more agent sessions than 1 but cost Kinference's tenant mix 8% (docs/BENCHMARKS.md, "Session
   * residency judged per endpoint").
   */
  static final Parameter OVERSUBSCRIPTION = Parameter.number("oversubscription", 1.0, 0.0, false, 100.0, true,
      "how many times an endpoint's KV memory its sessions' contexts must commit before they are held there");

  /** {@code maxSessions}: the most sessions remembered at once. */
  static final Parameter MAX_SESSIONS = Parameter.integer("maxSessions", 1_000_000, 1, 100_000_000,
      "the most sessions remembered at once");

  /**
   * The share of a new session's prompt cached on one candidate from which it counts as forked from a session there
   * (a subagent starting from its parent's context, 84-99% of its first prompt) rather than as a new context. A
   * chat's first turn, its system prompt cached (two thirds of it in Kinference's tenant mix), stays a new session:
   * taken for forks at 30%, they were held on their system prompt's endpoint and the tenant mix lost up to 7%.
   */
  static final double FORKED_SHARE = 0.8;

  /**
   * How close to the least committed candidate's free share of its KV memory another candidate's must be for a new
   * session to score 1 there too (0.05, 0.1 and 0.2 served 48 and 64 agent clients alike; docs/BENCHMARKS.md, "New
   * sessions where the least context is committed").
   */
  static final double NEW_SESSION_TOLERANCE = 0.1;

  /**
   * How long a session counts as known after its last request, so that a conversation back after a pause longer than
   * {@code idleExpiry} is not placed as a new one: as long as {@link SessionAffinityScorer} keeps it on its endpoint.
   */
  static final Duration KNOWN_SESSION_EXPIRY = Duration.ofMinutes(30);

  /** Where a session's context lives and how large it is. */
  private record Residence(String endpointId, int tokens) {}

  private final Cache<String, Residence> sessions;
  private final Cache<String, Boolean> known;
  private final Map<String, AtomicLong> committed = new ConcurrentHashMap<>();
  private final Parameters parameters;
  private final double oversubscription;

  /**
   * The default, on the system clock: 60 s, 1 times, 1,000,000 sessions. Public for {@link java.util.ServiceLoader}.
   */
  public SessionResidencyScorer() {
    this((Duration) IDLE_EXPIRY.defaultValue(), (Double) OVERSUBSCRIPTION.defaultValue(),
        (Long) MAX_SESSIONS.defaultValue(), System::nanoTime);
  }

  SessionResidencyScorer(Duration idleExpiry, double oversubscription, long maxSessions, LongSupplier ticker) {
    Map<String, Object> given = new LinkedHashMap<>();
    given.put(IDLE_EXPIRY.name(), idleExpiry);
    given.put(OVERSUBSCRIPTION.name(), oversubscription);
    given.put(MAX_SESSIONS.name(), maxSessions);
    this.parameters = Parameters.of(List.of(IDLE_EXPIRY, OVERSUBSCRIPTION, MAX_SESSIONS), given);
    this.oversubscription = oversubscription;
    this.sessions = Caffeine.newBuilder().expireAfterAccess(idleExpiry).maximumSize(maxSessions)
        .ticker(ticker::getAsLong).executor(Runnable::run)
        .<String, Residence>removalListener((key, old, cause) -> {
          if (old != null) {
            committedOf(old.endpointId()).addAndGet(-old.tokens());
          }
        }).build();
    this.known = Caffeine.newBuilder().expireAfterAccess(KNOWN_SESSION_EXPIRY.compareTo(idleExpiry) > 0
        ? KNOWN_SESSION_EXPIRY : idleExpiry).maximumSize(maxSessions).ticker(ticker::getAsLong)
        .executor(Runnable::run).build();
  }

  @Override
  public String name() {
    return "session-residency";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(IDLE_EXPIRY, OVERSUBSCRIPTION, MAX_SESSIONS);
  }

  /** A new instance with its own sessions, on the router's clock. */
  @Override
  public Scorer create(Parameters given, LongSupplier ticker) {
    return new SessionResidencyScorer(given.duration(IDLE_EXPIRY.name()), given.number(OVERSUBSCRIPTION.name()),
        given.integer(MAX_SESSIONS.name()), ticker);
  }

  @Override
  public Parameters parameters() {
    return parameters;
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    java.util.Arrays.fill(scores, 0, n, 0.0);
    String session = SessionAffinityScorer.key(context.request());
    if (session == null) {
      return;
    }
    for (int i = 0; i < n; i++) {
      if (capacity(context.candidate(i)) <= 0) {
        return;
      }
    }
    Residence residence = sessions.getIfPresent(session);
    int prompt = context.promptTokens();
    int holder = residence == null ? holderOfForkedContext(context, prompt) : -1;
    if (residence == null && holder < 0 && known.getIfPresent(session) == null) {
      scoreNewSession(context, scores);
      return;
    }
    // the count overstates what must be resident (see OVERSUBSCRIPTION): act once the servers show it too
    if (context.saturatedShare() < 0.5) {
      return;
    }
    if (residence != null) {
      for (int i = 0; i < n; i++) {
        EndpointState e = context.candidate(i);
        if (e.id().equals(residence.endpointId())) {
          long growth = Math.max(0, prompt - residence.tokens());
          if (committed(e.id()) + growth > oversubscription * capacity(e)) {
            scores[i] = 1.0;
          }
          return;
        }
      }
    }
    if (holder >= 0) {
      // a fork: it shares the context cached where its parent runs, so it is that endpoint's session already
      EndpointState e = context.candidate(holder);
      if (committed(e.id()) + prompt - context.cachedTokens(holder) > oversubscription * capacity(e)) {
        scores[holder] = 1.0;
      }
      return;
    }
    int fits = 0;
    int mostOversubscribed = 0;
    double worst = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      EndpointState e = context.candidate(i);
      long capacity = capacity(e);
      long used = committed(e.id());
      if (used + prompt <= oversubscription * capacity) {
        scores[i] = Math.max(0.0, (double) (capacity - used) / capacity);
        fits++;
      }
      double load = (double) used / capacity;
      if (load > worst) {
        worst = load;
        mostOversubscribed = i;
      }
    }
    if (fits == n) {
      // room on every candidate: nothing to hold back, the other scorers decide
      java.util.Arrays.fill(scores, 0, n, 0.0);
    } else if (fits == 0) {
      scores[mostOversubscribed] = 1.0;
    }
  }

  /**
   * A session's first request: 1 on the candidates whose sessions commit the smallest share of their KV memory (within
   * {@link #NEW_SESSION_TOLERANCE}), 0 elsewhere, loaded or not. Its later turns come back to where it lands, so it
   * is placed by the contexts each endpoint already has to keep, not by the momentary load the other scorers see:
   * placed by those, new agent sessions piled onto whichever endpoint was briefly idle (up to half of a run's new
   * sessions on one of four), whose sessions then outgrew its memory and were recomputed turn after turn.
   */
  private void scoreNewSession(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    double best = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      scores[i] = freeShare(context.candidate(i));
      best = Math.max(best, scores[i]);
    }
    for (int i = 0; i < n; i++) {
      scores[i] = scores[i] >= best - NEW_SESSION_TOLERANCE ? 1.0 : 0.0;
    }
  }

  private double freeShare(EndpointState e) {
    long capacity = capacity(e);
    return 1.0 - (double) committed(e.id()) / capacity;
  }

  /**
   * The candidate caching the most of this prompt, if that is more than {@link #FORKED_SHARE} of it and more than
   * every other candidate caches, else -1: a request of a session the scorer has not seen whose prompt is largely
   * cached, and most on one endpoint, is a subagent forked from a session's context there (or a session the scorer
   * forgot), not a new context.
   */
  private static int holderOfForkedContext(RoutingContext context, int prompt) {
    int holder = -1;
    int most = (int) (FORKED_SHARE * prompt);
    boolean tied = false;
    for (int i = 0; i < context.candidateCount(); i++) {
      int cached = context.cachedTokens(i);
      if (cached > most) {
        most = cached;
        holder = i;
        tied = false;
      } else if (cached == most && holder >= 0) {
        tied = true;
      }
    }
    // cached alike on several: a shared prompt (a system prompt, a document), not one session's context
    return tied ? -1 : holder;
  }

  @Override
  public void onRouted(RoutingContext context, int chosen) {
    String session = SessionAffinityScorer.key(context.request());
    if (session != null) {
      String endpointId = context.candidate(chosen).id();
      int tokens = context.promptTokens();
      committedOf(endpointId).addAndGet(tokens);
      known.put(session, Boolean.TRUE);
      // the replaced residence's tokens leave its endpoint's sum through the removal listener
      sessions.put(session, new Residence(endpointId, tokens));
    }
  }

  /** The KV tokens the sessions bound to this endpoint commit, as this scorer counts them. */
  long committed(String endpointId) {
    AtomicLong sum = committed.get(endpointId);
    return sum == null ? 0 : sum.get();
  }

  private AtomicLong committedOf(String endpointId) {
    return committed.computeIfAbsent(endpointId, id -> new AtomicLong());
  }

  private static long capacity(EndpointState e) {
    EndpointMetrics m = e.metrics();
    return m == null ? 0 : m.numGpuBlocks() * m.blockSize();
  }
}
