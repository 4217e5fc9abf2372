package dev.kinference.gateway;

import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import dev.kinference.request.ApiFormat;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /admin/usage?tenant=&model=&from=&to=&granularity=}: the usage totals the state store keeps (every
 * replica's when it is shared), for the holder of the admin key ({@code Authorization: Bearer KEY} or {@code
 * x-api-key}). {@code from} and {@code to} are ISO-8601 instants or dates (UTC); by default the current month up to
 * now; {@code granularity} is hour, day (the default) or month. Without an admin key configured it answers 404, so
 * that the API does not exist unless an operator enabled it. Thread-safe.
 */
final class UsageEndpoint {

  private final Governance governance;
  private final byte @Nullable [] adminKeyHash;

  UsageEndpoint(Governance governance, @Nullable String adminKey) {
    this.governance = governance;
    this.adminKeyHash = adminKey == null || adminKey.isBlank() ? null : sha256(adminKey.strip());
  }

  boolean handle(Request request, Response response, Callback callback) {
    byte[] expected = adminKeyHash;
    if (expected == null) {
      return GatewayHandler.error(response, callback, ApiFormat.OPENAI_CHAT, 404,
          "no such path: /admin/usage (the admin API is off: set KINFERENCE_ADMIN_KEY)");
    }
    String key = key(request);
    if (key == null || !MessageDigest.isEqual(expected, sha256(key))) {
      response.getHeaders().put("WWW-Authenticate", "Bearer");
      return GatewayHandler.error(response, callback, ApiFormat.OPENAI_CHAT, 401,
          "the admin API needs the admin key (Authorization: Bearer KEY)");
    }
    Fields q = Request.extractQueryParameters(request);
    UsageQuery query;
    try {
      Instant now = Instant.now();
      Instant from = instant(q.getValue("from"), CalendarPeriod.MONTH.start(now), "from");
      Instant to = instant(q.getValue("to"), now, "to");
      String g = q.getValue("granularity");
      CalendarPeriod granularity = g == null ? CalendarPeriod.DAY : switch (g.toLowerCase(Locale.ROOT)) {
        case "hour" -> CalendarPeriod.HOUR;
        case "day" -> CalendarPeriod.DAY;
        case "month" -> CalendarPeriod.MONTH;
        default -> throw new IllegalArgumentException("granularity must be hour, day or month, not '" + g + "'");
      };
      query = new UsageQuery(blankToNull(q.getValue("tenant")), blankToNull(q.getValue("model")),
          from, to.equals(from) ? to.plusMillis(1) : to, granularity);
    } catch (IllegalArgumentException e) {
      return GatewayHandler.error(response, callback, ApiFormat.OPENAI_CHAT, 400, e.getMessage());
    }
    List<UsageTotal> totals;
    try {
      totals = governance.usage(query);
    } catch (StateStoreUnavailableException e) {
      response.getHeaders().put("Retry-After", "1");
      return GatewayHandler.error(response, callback, ApiFormat.OPENAI_CHAT, 503,
          "usage totals cannot be read now: " + e.getMessage());
    }
    return GatewayHandler.text(response, callback, 200, "application/json", UsageReports.json(totals));
  }

  private static @Nullable String blankToNull(@Nullable String s) {
    return s == null || s.isBlank() ? null : s.strip();
  }

  private static Instant instant(@Nullable String text, Instant otherwise, String name) {
    if (text == null || text.isBlank()) {
      return otherwise;
    }
    try {
      return text.length() == 10 ? LocalDate.parse(text).atStartOfDay(ZoneOffset.UTC).toInstant()
          : Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(name + " must be an ISO-8601 instant or date (2026-12-01T00:00:00Z or "
          + "2026-12-01), not '" + text + "'", e);
    }
  }

  private static @Nullable String key(Request request) {
    String auth = request.getHeaders().get("authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return auth.substring(7).strip();
    }
    String k = request.getHeaders().get("x-api-key");
    return k == null ? null : k.strip();
  }

  /** The key's SHA-256 as the tenants' keys are kept ({@link Governance#sha256Hex}), as bytes to compare. */
  private static byte[] sha256(String key) {
    return Governance.sha256Hex(key).getBytes(StandardCharsets.US_ASCII);
  }
}
