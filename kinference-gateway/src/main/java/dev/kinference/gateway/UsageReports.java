package dev.kinference.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.policy.accounting.UsageTotal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Usage totals as {@code GET /admin/usage} and {@code kinference usage} show them: JSON objects with the fields
 * tenant, model, from, to, requests, errors, inputTokens, cachedTokens, outputTokens, totalTokens, cost and
 * currency, or a table. Stateless.
 */
public final class UsageReports {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private UsageReports() {}

  /** One total per tenant over all of {@code totals}' periods. */
  public static List<UsageTotal> perTenant(List<UsageTotal> totals) {
    Map<String, UsageTotal> merged = new LinkedHashMap<>();
    for (UsageTotal t : totals) {
      merged.merge(t.tenant() + '\u0000' + t.currency(), t, UsageTotal::plus);
    }
    return List.copyOf(merged.values());
  }

  /** {@code {"data": [...]}} with one object per total. */
  public static String json(List<UsageTotal> totals) {
    ObjectNode root = MAPPER.createObjectNode();
    ArrayNode data = root.putArray("data");
    for (UsageTotal t : totals) {
      ObjectNode o = data.addObject();
      o.put("tenant", t.tenant());
      o.put("model", t.model());
      o.put("from", t.from().toString());
      o.put("to", t.to().toString());
      o.put("requests", t.requests());
      o.put("errors", t.errors());
      o.put("inputTokens", t.inputTokens());
      o.put("cachedTokens", t.cachedTokens());
      o.put("outputTokens", t.outputTokens());
      o.put("totalTokens", t.totalTokens());
      o.put("cost", t.cost());
      o.put("currency", t.currency());
    }
    return root.toString();
  }

  /** A fixed-width table, one row per total. */
  public static String table(List<UsageTotal> totals) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-20s %-20s %-20s %9s %12s %12s %12s %14s%n",
        "TENANT", "FROM", "TO", "REQUESTS", "INPUT", "CACHED", "OUTPUT", "COST"));
    for (UsageTotal t : totals) {
      sb.append(String.format(Locale.ROOT, "%-20s %-20s %-20s %9d %12d %12d %12d %10.6f %s%n", t.tenant(),
          t.from(), t.to(), t.requests(), t.inputTokens(), t.cachedTokens(), t.outputTokens(), t.cost(),
          t.currency()));
    }
    if (totals.isEmpty()) {
      sb.append("(no usage recorded in that range)\n");
    }
    return sb.toString();
  }
}
