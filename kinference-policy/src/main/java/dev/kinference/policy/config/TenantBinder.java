package dev.kinference.policy.config;

import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.policy.model.Price;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.TrafficClass;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds a {@code Tenant}'s spec: API keys (as SHA-256 only), header match, models, rate limits per tenant and per
 * model (with the checks that a limit can admit a request), budget and traffic. Not thread-safe; one per document.
 */
final class TenantBinder {
  private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

  private final Binding b;

  TenantBinder(Binding b) {
    this.b = b;
  }

  Tenant tenant(ObjectMeta meta, Fields spec) {
    YNode keysNode = spec.peek("apiKeys");
    List<Tenant.ApiKey> keys = keysNode instanceof YNode.YScalar s && s.type() != YNode.Type.NULL
        ? inlineKeys(spec) : spec.list("apiKeys", this::apiKey);
    Tenant.HeaderMatch header = null;
    Fields h = spec.obj("header");
    if (h != null) {
      header = headerMatch(h);
    }
    checkDistinctKeys(spec, keys);
    List<String> models = spec.strList("models");
    if (!spec.has("models")) {
      spec.missing("models", "the public model names the tenant may use, or [\"*\"] for all");
    } else if (models.isEmpty()) {
      b.error(spec.pos("models"), spec.child("models"), "no models: this tenant can never be admitted");
    }
    Tenant.RateLimits limits = null;
    Fields l = spec.obj("limits");
    if (l != null) {
      limits = rateLimits(l);
    }
    Map<String, Tenant.RateLimits> modelLimits = spec.map("modelLimits", (n, p) -> {
      Fields o = b.obj(n, p);
      return o == null ? null : rateLimits(o);
    });
    if (limits != null) {
      for (var e : modelLimits.entrySet()) {
        String p = spec.child("modelLimits") + "." + e.getKey();
        warnLooser(p, e.getValue(), limits);
      }
    }
    checkReservable(spec, limits, modelLimits);
    Tenant.Budget budget = null;
    Fields bf = spec.obj("budget");
    if (bf != null) {
      budget = budget(bf);
    }
    Tenant.Traffic traffic = Tenant.Traffic.DEFAULT;
    Fields t = spec.obj("traffic");
    if (t != null) {
      traffic = traffic(t);
    }
    if (keys.isEmpty() && header == null && !spec.has("apiKeys")) {
      b.warn(spec.pos, spec.path, "no apiKeys and no header: callers can only be mapped to this tenant by code");
    }
    spec.done();
    return new Tenant(meta, new Tenant.Spec(keys, header, models, limits, modelLimits, budget, traffic));
  }

  private Tenant.HeaderMatch headerMatch(Fields h) {
    String name = h.requiredStr("name", "the header's name, such as x-tenant");
    String value = h.requiredStr("value", "the value identifying this tenant");
    if (h.has("name") && !HEADER_NAME.matcher(name).matches()) {
      b.error(h.pos("name"), h.child("name"), "'" + name + "' is not a valid header name");
    }
    h.done();
    return new Tenant.HeaderMatch(name, value);
  }

  private void checkDistinctKeys(Fields spec, List<Tenant.ApiKey> keys) {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < keys.size(); i++) {
      if (!seen.add(keys.get(i).sha256())) {
        String p = spec.child("apiKeys") + "[" + i + "]";
        b.error(b.positions.getOrDefault(p, spec.pos), p, "the same key is listed twice");
      }
    }
  }

  /** A budget per calendar period, in one currency: its own prices must be in that currency too. */
  private Tenant.Budget budget(Fields bf) {
    CalendarPeriod period = bf.enumValue("period", CalendarPeriod.class, CalendarPeriod::yamlName);
    if (!bf.has("period")) {
      bf.missing("period", "hour, day, week or month");
    }
    Double limit = bf.number("limit", 0, 1e15);
    if (!bf.has("limit")) {
      bf.missing("limit", "the most the tenant may spend per period");
    } else if (limit != null && limit == 0) {
      b.error(bf.pos("limit"), bf.child("limit"), "a budget of 0 can never admit a request");
    }
    String currency = bf.str("currency");
    if (currency != null && !isCurrency(currency)) {
      b.error(bf.pos("currency"), bf.child("currency"), "'" + YNode.abbreviate(currency) + "' is not an ISO 4217 "
          + "currency code" + suggestCurrency(currency) + "; write a code such as USD, EUR or GBP");
      currency = null;
    }
    String budgetCurrency = currency == null ? "USD" : currency;
    boolean currencyOk = currency != null || !bf.has("currency");
    boolean currencyGiven = bf.has("currency");
    Map<String, Price> prices = bf.map("prices",
        (n, p) -> budgetPrice(n, p, currencyOk ? budgetCurrency : null, currencyGiven));
    bf.done();
    return new Tenant.Budget(period == null ? CalendarPeriod.MONTH : period, limit == null ? 0 : limit,
        currency == null ? "USD" : currency, prices);
  }

  /**
   * One model's price in a budget; {@code budgetCurrency} is null when the budget's own currency was invalid (then
   * a price's currency is not compared with it).
   */
  private @Nullable Price budgetPrice(YNode n, String path, @Nullable String budgetCurrency,
      boolean currencyGiven) {
    Fields o = b.obj(n, path);
    if (o == null) {
      return null;
    }
    Double in = o.number("input", 0, 1e9);
    Double cached = o.number("cachedInput", 0, 1e9);
    Double out = o.number("output", 0, 1e9);
    String c = o.str("currency");
    if (c != null && !isCurrency(c)) {
      b.error(o.pos("currency"), o.child("currency"), "'" + YNode.abbreviate(c) + "' is not an ISO 4217 currency "
          + "code" + suggestCurrency(c) + "; write a code such as USD, EUR or GBP");
    } else if (c != null && budgetCurrency != null && !c.equals(budgetCurrency)) {
      b.error(o.pos("currency"), o.child("currency"), "this price is in " + c + " but the budget is in "
          + budgetCurrency + (currencyGiven ? "" : " (the default)") + ": a budget's prices are in one "
          + "currency, its own; convert the price or set the budget's currency");
    }
    o.done();
    return new Price(in == null ? 0 : in, cached, out == null ? 0 : out);
  }

  private Tenant.Traffic traffic(Fields t) {
    TrafficClass defaultClass = t.enumValue("defaultClass", TrafficClass.class, TenantBinder::className);
    List<TrafficClass> allowed = t.enumList("allowedClasses", TrafficClass.class, TenantBinder::className);
    Long priority = t.integer("priority", Tenant.Traffic.MIN_PRIORITY, Tenant.Traffic.MAX_PRIORITY);
    Long maxPriority = t.integer("maxPriority", Tenant.Traffic.MIN_PRIORITY, Tenant.Traffic.MAX_PRIORITY);
    TrafficClass def = defaultClass == null ? TrafficClass.INTERACTIVE : defaultClass;
    if (t.has("allowedClasses") && t.errorsBefore == b.errors && !allowed.contains(def)
        && def != TrafficClass.BATCH) {
      b.error(t.pos("allowedClasses"), t.child("allowedClasses"), (t.has("defaultClass") ? "does not include "
          + "defaultClass " + className(def) : "does not include " + className(def) + ", the defaultClass when none "
          + "is given") + ": add it, or set defaultClass: batch");
    }
    int p = priority == null ? 0 : priority.intValue();
    int max = maxPriority == null ? p : maxPriority.intValue();
    if (max < p) {
      b.error(t.pos("maxPriority"), t.child("maxPriority"), "maxPriority " + max + " is below priority " + p
          + (t.has("priority") ? "" : " (the default)") + ": it must be at least the priority of a request that "
          + "does not ask for one");
      max = p;
    }
    t.done();
    return new Tenant.Traffic(def, Set.copyOf(allowed), p, max);
  }

  /** Whether {@code code} is an ISO 4217 currency code known to {@link java.util.Currency}, upper-case. */
  static boolean isCurrency(String code) {
    if (code.length() != 3 || !code.equals(code.toUpperCase(Locale.ROOT))) {
      return false;
    }
    try {
      java.util.Currency.getInstance(code);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String suggestCurrency(String wrong) {
    String upper = wrong.strip().toUpperCase(Locale.ROOT);
    return !upper.equals(wrong) && isCurrency(upper) ? " (did you mean '" + upper + "'?)" : "";
  }

  private static String className(TrafficClass c) {
    return c.name().toLowerCase(Locale.ROOT);
  }

  private List<Tenant.ApiKey> inlineKeys(Fields spec) {
    YNode n = spec.get("apiKeys");
    b.error(n == null ? spec.pos : n.pos(), spec.child("apiKeys"), "API keys written inline: store each key's "
        + "SHA-256 instead, as apiKeys: [{sha256: ...}] (printf %s \"$KEY\" | sha256sum)");
    return List.of();
  }

  private Tenant.@Nullable ApiKey apiKey(YNode node, String path) {
    if (node instanceof YNode.YScalar s) {
      String v = s.value() == null ? "" : s.value();
      b.error(node.pos(), path, HEX64.matcher(v).matches()
          ? "write the hash as {sha256: " + v.toLowerCase(Locale.ROOT) + "}"
          : "API key written inline: store its SHA-256 instead, as {sha256: ...} (printf %s \"$KEY\" | sha256sum)");
      return null;
    }
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    for (String inline : Binding.INLINE_KEY_FIELDS) {
      if (o.has(inline)) {
        b.error(o.keyPos(inline), o.child(inline), "API key written inline: store its SHA-256 instead, as "
            + "sha256: ... (printf %s \"$KEY\" | sha256sum)");
        o.ignore(inline);
      }
    }
    String hash = o.str("sha256");
    if (hash == null && o.errorsBefore == b.errors) {
      o.missing("sha256", "the lower-case hex SHA-256 of the key");
    } else if (hash != null && !HEX64.matcher(hash).matches()) {
      b.error(o.pos("sha256"), o.child("sha256"), "not a SHA-256 hex digest (64 hex digits); if this is the key "
          + "itself, it must not be written here: printf %s \"$KEY\" | sha256sum");
      hash = null;
    }
    String name = o.str("name");
    o.done();
    return hash == null ? null : new Tenant.ApiKey(hash.toLowerCase(Locale.ROOT), name);
  }

  private Tenant.RateLimits rateLimits(Fields l) {
    Long rpm = l.integer("requestsPerMinute", 0, Long.MAX_VALUE / 4);
    Long tpm = l.integer("tokensPerMinute", 0, Long.MAX_VALUE / 4);
    Long conc = l.integer("concurrentRequests", 0, Integer.MAX_VALUE);
    Long defMax = l.integer("defaultMaxTokens", 1, 10_000_000);
    for (String k : List.of("requestsPerMinute", "tokensPerMinute", "concurrentRequests")) {
      YNode v = l.peek(k);
      if (v instanceof YNode.YScalar s && s.type() == YNode.Type.INT && "0".equals(s.value())) {
        b.error(v.pos(), l.child(k), "a limit of 0 can never admit a request; remove the limit or the model");
      }
    }
    l.done();
    return new Tenant.RateLimits(rpm, tpm, Scalars.toInt(conc), Scalars.toInt(defMax));
  }

  /**
   * A request without max_tokens reserves the model limit's defaultMaxTokens, else the tenant limits', else
   * {@value Tenant#DEFAULT_MAX_TOKENS} (as {@code Governance.reserve} does): a tokensPerMinute it does not fit under
   * can never admit such a request.
   */
  private void checkReservable(Fields spec, Tenant.@Nullable RateLimits limits,
      Map<String, Tenant.RateLimits> modelLimits) {
    Integer tenantDefault = limits == null ? null : limits.defaultMaxTokens();
    String limitsPath = spec.child("limits");
    if (limits != null) {
      int reserved = tenantDefault == null ? Tenant.DEFAULT_MAX_TOKENS : tenantDefault;
      tooFewTokens(limitsPath, limits.tokensPerMinute(), reserved, tenantDefault != null ? limitsPath : null, null);
    }
    for (var e : modelLimits.entrySet()) {
      String p = spec.child("modelLimits") + "." + e.getKey();
      Integer own = e.getValue().defaultMaxTokens();
      int reserved = own != null ? own : tenantDefault != null ? tenantDefault : Tenant.DEFAULT_MAX_TOKENS;
      String from = own != null ? p : tenantDefault != null ? limitsPath : null;
      tooFewTokens(p, e.getValue().tokensPerMinute(), reserved, from, null);
      if (own != null && limits != null && (tenantDefault == null || own > tenantDefault)) {
        // the tenant's own tokensPerMinute applies to this model's requests too
        tooFewTokens(limitsPath, limits.tokensPerMinute(), own, p, e.getKey());
      }
    }
  }

  private void tooFewTokens(String path, @Nullable Long tpm, int reserved, @Nullable String defaultFrom,
      @Nullable String model) {
    if (tpm == null || tpm <= 0 || tpm > reserved) {
      return;
    }
    String p = path + ".tokensPerMinute";
    b.error(b.positions.getOrDefault(p, YNode.Pos.UNKNOWN), p, "tokensPerMinute " + tpm + " is not more than the "
        + reserved + " output tokens reserved for a request " + (model == null ? "" : "for " + model + " ")
        + "without max_tokens (" + (defaultFrom == null ? "defaultMaxTokens, when none is set" : defaultFrom
        + ".defaultMaxTokens") + "): such requests can never be admitted");
  }

  private void warnLooser(String path, Tenant.RateLimits model, Tenant.RateLimits tenant) {
    if (looser(model.requestsPerMinute(), tenant.requestsPerMinute())
        || looser(model.tokensPerMinute(), tenant.tokensPerMinute())
        || looser(model.concurrentRequests() == null ? null : model.concurrentRequests().longValue(),
            tenant.concurrentRequests() == null ? null : tenant.concurrentRequests().longValue())) {
      b.warn(b.positions.getOrDefault(path, YNode.Pos.UNKNOWN), path,
          "a per-model limit above the tenant's own limit has no effect; the tenant's limit applies");
    }
  }

  private static boolean looser(@Nullable Long model, @Nullable Long tenant) {
    return model != null && tenant != null && model > tenant;
  }
}
