package dev.kinference.gateway;

import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.ResilientStateStore;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import java.time.Instant;
import java.util.List;

/**
 * The state store's gauges: which store and failure mode are in force, whether a shared store answers, what waits
 * to be reconciled, and each tenant's spend this month as the store counts it (every replica's, when shared: the
 * same value on each replica, so aggregate with max, not sum).
 */
final class StateStoreMetrics {

  private StateStoreMetrics() {}

  static void register(Metrics registry, Governance governance) {
    RateLimitStore store = governance.rateLimitStore();
    ResilientStateStore resilient = store instanceof ResilientStateStore r ? r : null;
    String failure = resilient == null ? "none" : resilient.failureMode().cliName();
    registry.gauge("kinference_state_store_info",
        "The state store holding rate limits, budgets and usage totals (memory: this replica only, so limits are "
            + "per replica), and its failure mode (none for memory).",
        out -> out.accept(new Metrics.Gauge.Sample(List.of(store.shared() ? store.name() : "memory", failure), 1)),
        "store", "failure");
    registry.gauge("kinference_state_store_up",
        "1 while the state store answers; 0 while a shared one is unreachable (limits then follow the failure mode).",
        out -> out.accept(new Metrics.Gauge.Sample(List.of(), resilient == null || resilient.up() ? 1 : 0)));
    if (resilient != null) {
      registry.gauge("kinference_state_store_pending_reconciliation",
          "Settlements waiting for the shared state store to answer again.",
          out -> out.accept(new Metrics.Gauge.Sample(List.of(), resilient.pendingReconciliation())));
      registry.gauge("kinference_state_store_degraded_admissions",
          "Requests this replica admitted on its share of the limits while the shared store was unreachable.",
          out -> out.accept(new Metrics.Gauge.Sample(List.of(), resilient.degradedAdmissions())));
    }
    registry.gauge("kinference_tenant_spend_month_to_date",
        "Each tenant's cost this calendar month (UTC) as the state store counts it, in the currency labelled.",
        out -> {
          Instant now = Instant.now();
          List<UsageTotal> totals;
          try {
            totals = governance.usage(new UsageQuery(null, null, CalendarPeriod.MONTH.start(now),
                now.plusMillis(1), CalendarPeriod.MONTH));
          } catch (StateStoreUnavailableException e) {
            return; // no sample rather than a wrong one
          }
          for (UsageTotal t : UsageReports.perTenant(totals)) {
            out.accept(new Metrics.Gauge.Sample(List.of(t.tenant(), t.currency()), t.cost()));
          }
        }, "tenant", "currency");
  }
}
