package dev.kinference.policy.limits;

import dev.kinference.plugin.Plugin;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageTotal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The governance state: counters for rate limits, concurrency limits and budgets, and durable usage totals.
 * Implementations must be thread-safe; {@link #tryReserve} must be atomic with respect to every other call touching
 * the same keys (no request may observe another's partial reservation as granted), so that no counter ever exceeds
 * its limit through a reservation. A store shared by several gateway replicas implements the same contract over the
 * network, with one server-side script per call, and windows computed from its own clock.
 *
 * <p>A shared store throws {@link StateStoreUnavailableException} from any call it could not complete in time;
 * {@link ResilientStateStore} turns that into the configured failure mode.
 */
public interface RateLimitStore extends Plugin, AutoCloseable {

  /** Reserves every demand, or none when one does not fit. {@code nowMillis} is the caller's clock. */
  Reservation tryReserve(List<Demand> demands, long nowMillis);

  /**
   * Corrects each demand of {@code granted} to what was really used, releases its {@link Window.Concurrent}
   * amounts, and adds {@code usage} (one finished request: its tenant, model, tokens and cost) to the usage totals
   * by hour, day and month. {@code actual[i]} belongs to {@code granted.demands().get(i)}; it may exceed the
   * estimate. A sliding window that no longer covers the reservation is not corrected. A shared store applies the
   * settlement of a grant once (by its ticket), so that a retry of a call that timed out but ran counts nothing
   * twice; a {@code nowMillis} more than five minutes from the store's clock (a settlement replayed after an
   * outage) books the usage at that time.
   */
  void settle(Reservation.Granted granted, long[] actual, @Nullable UsageEntry usage, long nowMillis);

  /** {@link #settle(Reservation.Granted, long[], UsageEntry, long)} without usage to record. */
  default void settle(Reservation.Granted granted, long[] actual, long nowMillis) {
    settle(granted, actual, null, nowMillis);
  }

  /** Undoes {@code granted} entirely: the request never started. */
  default void cancel(Reservation.Granted granted, long nowMillis) {
    settle(granted, new long[granted.demands().size()], null, nowMillis);
  }

  /**
   * Adds amounts admitted elsewhere, without checking any limit, and their usage: how a replica that admitted
   * requests on its own while this store was unreachable reconciles afterwards. {@code amounts[i]} is counted on
   * {@code demands.get(i)} at {@code atMillis} (a sliding window that no longer covers that time ignores it);
   * concurrency demands are ignored (those requests have ended). A shared store applies each {@code id} once, so
   * that a retry of a call that timed out but ran counts nothing twice.
   */
  void absorb(String id, List<Demand> demands, long[] amounts, @Nullable UsageEntry usage, long atMillis);

  /** What the counter {@code key} holds now in {@code window} (0 if unknown). */
  long used(String key, Window window, long nowMillis);

  /** The usage totals the query asks for, one per tenant and period, in tenant then time order. */
  List<UsageTotal> usage(UsageQuery query);

  /**
   * Publishes one gateway replica's pending prefill tokens per endpoint (the uncached prompt tokens of the requests
   * it sent there that have not produced a first token) and returns, for each endpoint of {@code own}, the sum of
   * what the other replicas published there within the last {@code ttl}: how replicas behind one Service see each
   * other's prompts still in their prefill, which the servers' scraped queues do not show. A replica's share
   * expires {@code ttl} after it last published it, so a replica that dies is forgotten. One call per scrape
   * interval and replica; a shared store makes it one round trip. An endpoint no other replica published at maps to
   * 0. A store that is not {@link #shared() shared} has no other replicas: the default returns 0 everywhere.
   *
   * @param replica this replica's id, unique among the replicas sharing the store
   * @param own this replica's pending prefill tokens by endpoint id, none negative
   * @param ttl how long each published share counts, positive
   * @throws StateStoreUnavailableException if a shared store could not be reached in time
   */
  default Map<String, Long> sharePendingPrefillTokens(String replica, Map<String, Long> own, Duration ttl) {
    return PendingPrefillShares.none(own);
  }

  /** Whether several processes share this store's counts (a network store), as opposed to one process's memory. */
  default boolean shared() {
    return false;
  }

  /** Whether the store answers now (a shared store pings its server). */
  default boolean ping() {
    return true;
  }

  /** Releases connections and threads; the default does nothing. */
  @Override
  default void close() {}
}
