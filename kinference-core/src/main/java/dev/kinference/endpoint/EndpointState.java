package dev.kinference.endpoint;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * What the router knows of one endpoint: the last metrics snapshot, its health, and the router's own live account
 * of the requests it sent there (in flight, waiting for their first token, prompt tokens still to prefill).
 *
 * <p>Thread-safe and lock-free: metrics and health are volatile snapshots written by one scraper; the account is
 * kept in atomics updated by any number of request threads. Reads are individually atomic but not a consistent
 * snapshot of all fields, which routing tolerates.
 *
 * <p>The account is kept by the {@code Router} and by the lifecycle calls on a {@code RoutingDecision}; other code
 * reads it. "Since the last scrape" counts requests dispatched after the current metrics were taken, which those
 * metrics cannot yet show.
 *
 * <p>One of several router replicas sharing the traffic sees only its own sends; what the others share of theirs
 * ({@link #updatePeerPendingPrefillTokens}) counts beside its own. Without it, each replica took the servers it had
 * not sent to lately for idle while another replica's prompts were still in their prefill, which the scraped queue
 * does not show (docs/BENCHMARKS.md, "Router replicas").
 */
public final class EndpointState {

  private final Endpoint endpoint;
  private final int slot;
  private volatile @Nullable EndpointMetrics metrics;
  private volatile Health health = Health.HEALTHY;
  private volatile String healthReason = "";

  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger awaitingFirstToken = new AtomicInteger();
  private final AtomicLong pendingPrefillTokens = new AtomicLong();
  private final AtomicLong scrapeGeneration = new AtomicLong();
  private final AtomicInteger awaitingSinceScrape = new AtomicInteger();
  private final AtomicLong pendingTokensSinceScrape = new AtomicLong();
  private final LongAdder dispatched = new LongAdder();
  private final LongAdder firstTokens = new LongAdder();
  private final LongAdder completed = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private volatile double uncachedTokensPerRequest;
  private final PrefillRate prefillRate;
  private volatile @Nullable OffloadTier offloadTier;
  private volatile long peerPendingPrefillTokens;
  private final PromptsAwaitingFirstToken promptsAwaitingFirstToken = new PromptsAwaitingFirstToken();

  EndpointState(Endpoint endpoint, int slot, PrefillRate prefillRate) {
    this.endpoint = endpoint;
    this.slot = slot;
    this.prefillRate = prefillRate;
  }

  /** A state outside any fleet, for tests and tools. */
  public static EndpointState detached(Endpoint endpoint, int slot) {
    if (slot < 0) {
      throw new IllegalArgumentException("slot must not be negative: " + slot);
    }
    return new EndpointState(endpoint, slot, new PrefillRate());
  }

  public Endpoint endpoint() {
    return endpoint;
  }

  public String id() {
    return endpoint.id();
  }

  /** A small dense number identifying this endpoint in its fleet while it is a member; indexes key on it. */
  public int slot() {
    return slot;
  }

  /** The last metrics scraped, or null if none yet. */
  public @Nullable EndpointMetrics metrics() {
    return metrics;
  }

  public Health health() {
    return health;
  }

  /** Why the endpoint is not healthy, or an empty string. */
  public String healthReason() {
    return healthReason;
  }

  /** Tokens per KV block: from metrics when known, else {@code fallback}. */
  public int blockSize(int fallback) {
    EndpointMetrics m = metrics;
    return m != null && m.blockSize() > 0 ? m.blockSize() : fallback;
  }

  /** The endpoint's offload tier, or null when it has none (or the router does not credit it). */
  public @Nullable OffloadTier offloadTier() {
    return offloadTier;
  }

  /** Sets (or, with null, removes) the offload tier routing credits; called by whoever follows its KV events. */
  public void attachOffloadTier(@Nullable OffloadTier tier) {
    offloadTier = tier;
  }

  /**
   * Replaces what the other router replicas sharing the traffic last shared of their accounts here: the uncached
   * prompt tokens of their requests still waiting for a first token. {@link #estimatedPendingPrefillTokens()} adds
   * them to this router's own; 0 (the default) while nothing is shared.
   *
   * @throws IllegalArgumentException if negative; the previous value stays
   */
  public void updatePeerPendingPrefillTokens(long tokens) {
    if (tokens < 0) {
      throw new IllegalArgumentException("peer pending prefill tokens must not be negative: " + tokens);
    }
    peerPendingPrefillTokens = tokens;
  }

  /** The other router replicas' pending prefill tokens here, as last shared; 0 while nothing is shared. */
  public long peerPendingPrefillTokens() {
    return peerPendingPrefillTokens;
  }

  /** Replaces the metrics snapshot; called by the scraper. */
  public void updateMetrics(EndpointMetrics newMetrics) {
    metrics = newMetrics;
    scrapeGeneration.incrementAndGet();
    awaitingSinceScrape.set(0);
    pendingTokensSinceScrape.set(0);
  }

  /** Sets the health; a draining endpoint stays draining. */
  public void updateHealth(Health newHealth, String reason) {
    if (health == Health.DRAINING && newHealth != Health.DRAINING) {
      return;
    }
    health = newHealth;
    healthReason = newHealth == Health.HEALTHY ? "" : reason;
  }

  void revive() {
    health = Health.HEALTHY;
    healthReason = "";
  }

  /** Requests sent here and not yet finished. */
  public int inFlight() {
    return inFlight.get();
  }

  /** Requests sent here that have not produced their first token. */
  public int awaitingFirstToken() {
    return awaitingFirstToken.get();
  }

  /** Uncached prompt tokens of the requests awaiting their first token. */
  public long pendingPrefillTokens() {
    return pendingPrefillTokens.get();
  }

  /** Queue length: the scraped waiting count plus what was sent since, or the own count if never scraped. */
  public int estimatedWaiting() {
    return (int) estimatedWaiting(1);
  }

  /**
   * Queue length as {@link #estimatedWaiting()}, with each request sent here since the last scrape (or, if never
   * scraped, each awaiting its first token) counted as {@code sinceScrapeWeight} of one the server reported waiting:
   * a server admits most new requests at its next step, so a request sent since is less surely queued.
   */
  public double estimatedWaiting(double sinceScrapeWeight) {
    EndpointMetrics m = metrics;
    return m == null
        ? sinceScrapeWeight * awaitingFirstToken.get()
        : m.waiting() + sinceScrapeWeight * Math.max(0, awaitingSinceScrape.get());
  }

  /** The scraped {@code kv_cache_usage_perc} clamped to [0, 1]; 0 when not scraped or not reported. */
  public double kvUsage() {
    EndpointMetrics m = metrics;
    return m == null || Double.isNaN(m.kvUsage()) ? 0 : Math.max(0, Math.min(1, m.kvUsage()));
  }

  /**
   * KV usage as {@link #kvUsage()}, plus the uncached prompt tokens of the requests sent here since the last scrape
   * that still await their first token, as a share of the cache ({@code numGpuBlocks} blocks of {@code blockSize}
   * tokens): so that requests routed between two scrapes do not all see the same usage. The scraped usage alone when
   * the cache's size is not known. Not clamped: a burst may take it above 1.
   */
  public double estimatedKvUsage() {
    EndpointMetrics m = metrics;
    double scraped = kvUsage();
    if (m == null || m.numGpuBlocks() <= 0 || m.blockSize() <= 0) {
      return scraped;
    }
    return scraped + Math.max(0, pendingTokensSinceScrape.get()) / ((double) m.blockSize() * m.numGpuBlocks());
  }

  /** Running requests: the scraped count, or at least those of our own that are past their first token. */
  public int estimatedRunning() {
    int own = Math.max(0, inFlight.get() - awaitingFirstToken.get());
    EndpointMetrics m = metrics;
    return m == null ? own : Math.max(m.running(), own);
  }

  /**
   * Prompt tokens the server must prefill before a new request's own: the larger of the router's exact count of
   * its own (with what other router replicas shared of theirs) and an estimate from the scraped queue (which also
   * holds other routers' requests, but not those in their prefill).
   */
  public long estimatedPendingPrefillTokens() {
    long own = pendingPrefillTokens.get() + peerPendingPrefillTokens;
    EndpointMetrics m = metrics;
    if (m == null) {
      return own;
    }
    long fromMetrics = (long) (m.waiting() * uncachedTokensPerRequest) + pendingTokensSinceScrape.get();
    return Math.max(own, fromMetrics);
  }

  /**
   * Records a request sent here with {@code uncachedTokens} to prefill.
   *
   * @return the scrape generation to hand back to {@link #onFirstToken} and {@link #onFinished}
   */
  public long onDispatched(int uncachedTokens) {
    long generation = scrapeGeneration.get();
    inFlight.incrementAndGet();
    awaitingFirstToken.incrementAndGet();
    pendingPrefillTokens.addAndGet(uncachedTokens);
    awaitingSinceScrape.incrementAndGet();
    pendingTokensSinceScrape.addAndGet(uncachedTokens);
    dispatched.increment();
    double avg = uncachedTokensPerRequest;
    uncachedTokensPerRequest = avg == 0 ? uncachedTokens : avg + 0.05 * (uncachedTokens - avg);
    return generation;
  }

  /**
   * The prompts this router sent here that have not had their first token yet (recorded by the router when its cache
   * index is precise, which counts them as held).
   */
  public PromptsAwaitingFirstToken promptsAwaitingFirstToken() {
    return promptsAwaitingFirstToken;
  }

  /** Records the first token of a request dispatched with {@link #onDispatched}. */
  public void onFirstToken(int uncachedTokens, long generation) {
    awaitingFirstToken.decrementAndGet();
    pendingPrefillTokens.addAndGet(-uncachedTokens);
    if (generation == scrapeGeneration.get()) {
      awaitingSinceScrape.decrementAndGet();
      pendingTokensSinceScrape.addAndGet(-uncachedTokens);
    }
    firstTokens.increment();
  }

  /**
   * Records the end of a request. If it never produced a first token, its pending prefill is released too.
   *
   * @param succeeded false if it failed or was cancelled
   */
  public void onFinished(boolean sawFirstToken, int uncachedTokens, long generation, boolean succeeded) {
    if (!sawFirstToken) {
      awaitingFirstToken.decrementAndGet();
      pendingPrefillTokens.addAndGet(-uncachedTokens);
      if (generation == scrapeGeneration.get()) {
        awaitingSinceScrape.decrementAndGet();
        pendingTokensSinceScrape.addAndGet(-uncachedTokens);
      }
    }
    inFlight.decrementAndGet();
    if (succeeded) {
      completed.increment();
    } else {
      failed.increment();
    }
  }

  /**
   * Corrects the uncached tokens a request is assumed to bring (with which {@link #estimatedPendingPrefillTokens()}
   * reads the scraped queue) by what a finished request's server reported it prefilled against what was counted at
   * dispatch: the router's tokenizer may be approximate and its cache index wrong. Racy updates lose a correction
   * at worst.
   */
  public void onPrefillReported(int countedTokens, int reportedTokens) {
    double avg = uncachedTokensPerRequest;
    if (avg > 0) {
      uncachedTokensPerRequest = Math.max(0, avg + 0.05 * (reportedTokens - countedTokens));
    }
  }

  /** Requests dispatched here since the router started. */
  public long dispatchedCount() {
    return dispatched.sum();
  }

  /** Requests that ended in failure. */
  public long failedCount() {
    return failed.sum();
  }

  /** Requests that completed. */
  public long completedCount() {
    return completed.sum();
  }

  /**
   * The learned prefill rate in tokens per second, or {@code coldStart} until a first observation. Shared by every
   * endpoint of the fleet serving the same model on the same {@link Endpoint#HARDWARE_LABEL hardware}; learned as
   * an exponentially weighted mean in log space, so one outlier moves it by a bounded factor.
   */
  public double prefillTokensPerSecond(double coldStart) {
    return prefillRate.tokensPerSecond(coldStart);
  }

  /** Number of observations the (shared) prefill rate was learned from. */
  public long prefillRateSamples() {
    return prefillRate.samples();
  }

  /** Folds one observed prefill rate into the (shared) learned rate. Racy updates lose a sample at worst. */
  public void learnPrefillRate(double observedTokensPerSecond, double coldStart) {
    prefillRate.learn(observedTokensPerSecond, coldStart);
  }

  @Override
  public String toString() {
    return "EndpointState[" + endpoint.id() + " slot=" + slot + " " + health + " inFlight=" + inFlight.get()
        + " awaiting=" + awaitingFirstToken.get() + "]";
  }
}
