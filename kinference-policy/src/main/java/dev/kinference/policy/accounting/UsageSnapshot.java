package dev.kinference.policy.accounting;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A copy of the usage counters at one time, ordered by tenant then model. Immutable.
 *
 * @param at when it was taken
 * @param records one per tenant and model that saw a request
 */
public record UsageSnapshot(Instant at, List<UsageRecord> records) {

  public UsageSnapshot {
    Objects.requireNonNull(at, "at");
    records = List.copyOf(records);
  }

  /** The records of one tenant and/or one model; null matches any. */
  public List<UsageRecord> query(@Nullable String tenant, @Nullable String model) {
    return records.stream()
        .filter(r -> tenant == null || r.tenant().equals(tenant))
        .filter(r -> model == null || r.model().equals(model))
        .toList();
  }

  /** Totals per tenant (the model of each total is {@code *}). */
  public Map<String, UsageRecord> byTenant() {
    return total(UsageRecord::tenant);
  }

  /** Totals per model (the tenant of each total is {@code *}). */
  public Map<String, UsageRecord> byModel() {
    return total(UsageRecord::model);
  }

  private Map<String, UsageRecord> total(Function<UsageRecord, String> key) {
    Map<String, UsageRecord> out = new LinkedHashMap<>();
    for (UsageRecord r : records) {
      String k = key.apply(r);
      boolean byTenant = k.equals(r.tenant());
      UsageRecord zero = new UsageRecord(byTenant ? k : "*", byTenant ? "*" : k, 0, 0, 0, 0, 0, 0, 0);
      out.merge(k, zero.plus(r), UsageRecord::plus);
    }
    return out;
  }

  /**
   * The counters in the Prometheus text exposition format: {@code kinference_tenant_requests_total},
   * {@code _errors_total}, {@code _rejected_total}, {@code _input_tokens_total}, {@code _cached_input_tokens_total},
   * {@code _output_tokens_total} and {@code _cost_total} (currency units), each labelled {@code tenant} and
   * {@code model}.
   */
  public String toPrometheusText() {
    StringBuilder sb = new StringBuilder();
    metric(sb, "requests", "Requests sent to a model, by tenant", UsageRecord::requests);
    metric(sb, "errors", "Requests that failed, by tenant", UsageRecord::errors);
    metric(sb, "rejected", "Requests refused by policy, rate limit or budget, by tenant", UsageRecord::rejected);
    metric(sb, "input_tokens", "Input tokens, cached ones included", UsageRecord::inputTokens);
    metric(sb, "cached_input_tokens", "Input tokens served from a prefix cache", UsageRecord::cachedInputTokens);
    metric(sb, "output_tokens", "Output tokens", UsageRecord::outputTokens);
    String name = "kinference_tenant_cost_total";
    sb.append("# HELP ").append(name).append(" Cost in currency units\n# TYPE ").append(name).append(" counter\n");
    for (UsageRecord r : records) {
      sb.append(name).append(labels(r)).append(' ').append(r.costMicros() / 1e6).append('\n');
    }
    return sb.toString();
  }

  private void metric(StringBuilder sb, String what, String help, java.util.function.ToLongFunction<UsageRecord> f) {
    String name = "kinference_tenant_" + what + "_total";
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(" counter\n");
    for (UsageRecord r : records) {
      sb.append(name).append(labels(r)).append(' ').append(f.applyAsLong(r)).append('\n');
    }
  }

  private static String labels(UsageRecord r) {
    return "{tenant=\"" + escape(r.tenant()) + "\",model=\"" + escape(r.model()) + "\"}";
  }

  private static String escape(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
