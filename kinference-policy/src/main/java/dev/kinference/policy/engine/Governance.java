package dev.kinference.policy.engine;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.Fleet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.accounting.Accounting;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.limits.Demand;
import dev.kinference.policy.limits.InMemoryRateLimitStore;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.Reservation;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import dev.kinference.policy.limits.Window;
import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.Price;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RequestRejectedException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a gateway needs from a policy configuration, in the order it needs it (see {@link dev.kinference.policy.engine
 * the package}): {@link #authenticate} a caller, {@link #reserve} its rate limits and budget, let the router
 * consult {@link #engine()}, then settle the {@link Admission} with the real usage. Usage is recorded in {@link
 * #accounting()}.
 *
 * <p>Thread-safe: every method may be called from any number of threads. Reservations take no global lock (see
 * {@link InMemoryRateLimitStore}).
 */
public final class Governance {

  private static final Logger log = LoggerFactory.getLogger(Governance.class);

  /** The currency of usage totals when the tenant has no budget that names one. */
  public static final String DEFAULT_CURRENCY = "USD";

  /** The tenant name used in accounting when the configuration has no tenants. */
  public static final String ANONYMOUS = "anonymous";

  private static final Fleet.Snapshot NO_FLEET = new Fleet.Snapshot(List.of(), Map.of(), Map.of(), 0);

  private final YamlPolicyEngine engine;
  private final RateLimitStore store;
  private final Accounting accounting;
  private final InstantSource clock;

  private Governance(Builder b) {
    this.engine = Objects.requireNonNull(b.engine, "engine");
    this.store = b.store != null ? b.store : Plugins.load(RateLimitStore.class).providers().stream().findFirst()
        .orElseGet(InMemoryRateLimitStore::new);
    this.clock = b.clock;
    this.accounting = new Accounting(clock);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Governance over a fixed configuration, with the default engine settings and an in-memory store. */
  public static Governance of(PolicyConfig config) {
    return builder().engine(YamlPolicyEngine.builder().config(config).build()).build();
  }

  /** The policy engine, to give to {@code Router.builder().policyEngine(...)}. */
  public YamlPolicyEngine engine() {
    return engine;
  }

  /** The configuration in force now. */
  public PolicyConfig config() {
    return engine.config();
  }

  public Accounting accounting() {
    return accounting;
  }

  public RateLimitStore rateLimitStore() {
    return store;
  }

  /**
   * Who is calling, from the request headers (names case-insensitive): an API key sent as {@code Authorization:
   * Bearer KEY} or {@code x-api-key: KEY}, matched by its SHA-256 against the tenants' keys; else a tenant's
   * identifying header. A configuration without tenants lets anyone in as {@link Caller#ANONYMOUS}.
   *
   * @throws RequestRejectedException 401 when a key is sent and unknown, or nothing identifies a tenant
   */
  public Caller authenticate(Map<String, String> headers) {
    PolicyConfig cfg = engine.config();
    String key = apiKey(headers);
    if (key != null) {
      PolicyConfig.KeyOwner owner = cfg.tenantByKeyHash(sha256Hex(key));
      if (owner != null) {
        return new Caller(owner.tenant().name(), owner.key().name());
      }
      if (!cfg.tenants().isEmpty()) {
        throw rejected(401, "invalid API key", null, "builtin/authenticate: unknown API key");
      }
    }
    for (Tenant t : cfg.headerTenants()) {
      Tenant.HeaderMatch h = Objects.requireNonNull(t.spec().header());
      if (h.value().equals(header(headers, h.name()))) {
        return new Caller(t.name(), null);
      }
    }
    if (cfg.tenants().isEmpty()) {
      return Caller.ANONYMOUS;
    }
    throw rejected(401, "missing credentials: send an API key (Authorization: Bearer KEY or x-api-key: KEY)", null,
        "builtin/authenticate: no key and no tenant header");
  }

  /**
   * Reserves the request's rate limits and budget: one request, its estimated input tokens plus its output budget
   * ({@code max_tokens}, or the tenant's {@code defaultMaxTokens}, which is then imposed on the request), one
   * concurrent slot, and its estimated cost, on the tenant's limits and on its limits for the requested model, all
   * or nothing. Send {@link Admission#request()}, then settle the admission.
   *
   * @throws RequestRejectedException 401/403/404 when the tenant may not use the model; 429 with {@code
   *     Retry-After} when a limit or the budget is exhausted; 400 when the request could never fit a limit
   */
  public Admission reserve(InferenceRequest request) {
    PolicyConfig cfg = engine.config();
    String model = request.model();
    Tenant tenant = request.tenant() == null ? null : cfg.tenant(Objects.requireNonNull(request.tenant()));
    String who = tenant != null ? tenant.name() : (cfg.tenants().isEmpty() ? ANONYMOUS : "(unknown)");
    String accountedModel = cfg.knowsModel(model) || (cfg.aliases().isEmpty() && cfg.pools().isEmpty())
        ? model : "(other)";
    PolicyVerdict.Reject denied = new Evaluation(engine, cfg, request, NO_FLEET, 0, false).access();
    if (denied != null) {
      accounting.recordRejected(who, accountedModel);
      throw new RequestRejectedException(denied.httpStatus(), denied.reason(), denied.retryAfter(), denied.trace());
    }
    int input = engine.estimateInputTokens(request);
    Tenant.RateLimits tl = tenant == null ? null : tenant.spec().limits();
    Tenant.RateLimits ml = tenant == null ? null : tenant.spec().modelLimits().get(model);
    int defaultMax = ml != null && ml.defaultMaxTokens() != null ? ml.defaultMaxTokens()
        : tl != null && tl.defaultMaxTokens() != null ? tl.defaultMaxTokens() : Tenant.DEFAULT_MAX_TOKENS;
    Tenant.Budget budget = tenant == null ? null : tenant.spec().budget();
    boolean counted = tl != null || ml != null || budget != null;
    int perSequence = request.maxTokens() > 0 ? request.maxTokens() : defaultMax;
    // n and best_of: the server generates that many sequences, each up to max_tokens
    int output = (int) Math.min(Integer.MAX_VALUE, (long) perSequence * request.sequences());
    InferenceRequest admitted = request.maxTokens() > 0 || !counted ? request
        : request.toBuilder().maxTokens(perSequence).build();
    long tokens = (long) input + output;
    long now = clock.millis();
    List<Demand> demands = new ArrayList<>();
    List<Admission.Kind> kinds = new ArrayList<>();
    Price price = priceFor(cfg, tenant, model, null);
    if (tenant != null) {
      limits(demands, kinds, tl, "tenant/" + tenant.name(), "tenant " + tenant.name(), tokens);
      limits(demands, kinds, ml, "tenant/" + tenant.name() + "/model/" + model,
          "tenant " + tenant.name() + " on model " + model, tokens);
      if (budget != null) {
        long limitMicros = Math.round(budget.limit() * 1e6);
        demands.add(new Demand("tenant/" + tenant.name() + ":budget", new Window.Period(budget.period()),
            limitMicros, price.costMicros(input, 0, output), "the " + budget.period().adjective() + " budget of "
                + money(limitMicros, budget.currency()) + " of tenant " + tenant.name()));
        kinds.add(Admission.Kind.COST);
      }
    }
    for (Demand d : demands) {
      if (d.amount() > d.limit()) {
        accounting.recordRejected(who, accountedModel);
        String need = kindOf(demands, kinds, d) == Admission.Kind.COST
            ? "an estimated " + money(d.amount(), currency(budget)) : d.amount() + " tokens (~" + input
                + " input + " + (request.sequences() > 1 ? request.sequences() + " sequences x " + perSequence
                    : Integer.toString(output)) + " max_tokens)";
        throw rejected(400, "this request needs " + need + ", more than " + d.description() + " ("
            + (kindOf(demands, kinds, d) == Admission.Kind.COST ? money(d.limit(), currency(budget)) : d.limit())
            + "): it can never be admitted; lower max_tokens or shorten the prompt", null,
            "builtin/limits: larger than " + d.description());
      }
    }
    Reservation r;
    try {
      r = demands.isEmpty() ? new Reservation.Granted(List.of(), now) : store.tryReserve(demands, now);
    } catch (StateStoreUnavailableException e) {
      accounting.recordRejected(who, accountedModel);
      throw rejected(503, "rate limits cannot be checked now: " + e.getMessage(), Duration.ofSeconds(1),
          "builtin/limits: state store unavailable (failure mode closed)");
    }
    return switch (r) {
      case Reservation.Refused no -> {
        accounting.recordRejected(who, accountedModel);
        Duration retry = no.retryAfter();
        boolean cost = kindOf(demands, kinds, no.demand()) == Admission.Kind.COST;
        String reason = cost
            ? "budget exhausted: " + money(no.used(), currency(budget)) + " of " + no.demand().description()
                + " is spent or reserved; it renews at " + Instant.ofEpochMilli(now).plus(retry)
            : "rate limit exceeded: " + no.demand().description() + " allows " + no.demand().limit() + ", "
                + no.used() + " in use, this request needs " + no.demand().amount() + "; retry after "
                + Math.max(1, (retry.toMillis() + 999) / 1000) + " s";
        throw rejected(429, reason, retry, "builtin/limits: " + no.demand().description());
      }
      case Reservation.Granted yes -> new Admission(this, admitted, who, accountedModel, tenant, input, output,
          price, yes, kinds);
    };
  }

  private static Admission.Kind kindOf(List<Demand> demands, List<Admission.Kind> kinds, Demand d) {
    int i = demands.indexOf(d);
    return i < 0 ? Admission.Kind.REQUESTS : kinds.get(i);
  }

  private static void limits(List<Demand> demands, List<Admission.Kind> kinds, Tenant.@Nullable RateLimits l,
      String key, String who, long tokens) {
    if (l == null) {
      return;
    }
    if (l.requestsPerMinute() != null) {
      demands.add(new Demand(key + ":requests", Window.Sliding.MINUTE, l.requestsPerMinute(), 1,
          "requestsPerMinute of " + who));
      kinds.add(Admission.Kind.REQUESTS);
    }
    if (l.tokensPerMinute() != null) {
      demands.add(new Demand(key + ":tokens", Window.Sliding.MINUTE, l.tokensPerMinute(), tokens,
          "tokensPerMinute of " + who));
      kinds.add(Admission.Kind.TOKENS);
    }
    if (l.concurrentRequests() != null) {
      demands.add(new Demand(key + ":concurrent", Window.Concurrent.INSTANCE, l.concurrentRequests(), 1,
          "concurrentRequests of " + who));
      kinds.add(Admission.Kind.CONCURRENT);
    }
  }

  /**
   * The price charged for {@code model}: the tenant's budget price for it (or its {@code *} price), else the
   * price of the endpoint that served it (its provider model's or its pool's), else the highest price among the
   * model's targets, else free.
   */
  static Price priceFor(PolicyConfig cfg, @Nullable Tenant tenant, String model, @Nullable Endpoint servedBy) {
    Tenant.Budget b = tenant == null ? null : tenant.spec().budget();
    if (b != null) {
      Price p = b.prices().get(model);
      if (p == null) {
        p = b.prices().get("*");
      }
      if (p != null) {
        return p;
      }
    }
    if (servedBy != null) {
      String provider = servedBy.label(ExternalProvider.PROVIDER_LABEL);
      ExternalProvider ep = provider == null ? null : cfg.provider(provider);
      Price p = ep == null ? null : ep.priceOf(servedBy.model());
      if (p != null) {
        return p;
      }
      String poolName = servedBy.label(InferencePool.POOL_LABEL);
      InferencePool pool = poolName == null ? null : cfg.pool(poolName);
      if (pool != null && pool.spec().price() != null) {
        return Objects.requireNonNull(pool.spec().price());
      }
    }
    Price best = null;
    ModelAlias alias = cfg.aliasFor(model);
    if (alias != null) {
      for (ModelAlias.Target t : alias.spec().targets()) {
        Price p = null;
        InferencePool pool = t.pool() == null ? null : cfg.pool(t.pool());
        ExternalProvider ep = t.provider() == null ? null : cfg.provider(t.provider());
        if (pool != null) {
          p = pool.spec().price();
        } else if (ep != null && t.model() != null) {
          p = ep.priceOf(t.model());
        }
        if (p != null && (best == null || p.input() + p.output() > best.input() + best.output())) {
          best = p;
        }
      }
    }
    if (best == null) {
      for (InferencePool pool : cfg.poolsServing(model)) {
        if (pool.spec().price() != null) {
          best = pool.spec().price();
          break;
        }
      }
    }
    return best == null ? Price.ZERO : best;
  }

  long nowMillis() {
    return clock.millis();
  }

  void settled(Admission a, Reservation.Granted granted, long[] actual, dev.kinference.routing.Usage usage,
      long costMicros, boolean failed) {
    int cached = Math.min(usage.cachedPromptTokens(), usage.promptTokens());
    UsageEntry entry = new UsageEntry(a.tenant(), a.model(), failed, usage.promptTokens(), cached,
        usage.completionTokens(), Math.max(0, costMicros), a.currency());
    try {
      store.settle(granted, actual, entry, clock.millis());
    } catch (StateStoreUnavailableException e) {
      // a bare shared store (not wrapped in ResilientStateStore) that is down: the in-process accounting still has it
      log.warn("Usage of a request of tenant {} could not be settled in the state store: {}", a.tenant(),
          e.getMessage());
    }
    accounting.recordRequest(a.tenant(), a.model(), usage, costMicros, failed);
  }

  /**
   * The usage totals kept by the state store (every replica's, when it is shared).
   *
   * @throws StateStoreUnavailableException when a shared store cannot be reached
   */
  public List<UsageTotal> usage(UsageQuery query) {
    return store.usage(query);
  }

  void cancelled(Admission a, Reservation.Granted granted) {
    if (!granted.demands().isEmpty()) {
      try {
        store.cancel(granted, clock.millis());
      } catch (StateStoreUnavailableException e) {
        log.warn("A reservation of tenant {} could not be released in the state store: {}", a.tenant(),
            e.getMessage());
      }
    }
    accounting.recordRejected(a.tenant(), a.model());
  }

  private static String currency(Tenant.@Nullable Budget b) {
    return b == null ? "" : b.currency();
  }

  static String money(long micros, String currency) {
    return String.format(Locale.ROOT, "%.2f %s", micros / 1e6, currency).strip();
  }

  private static @Nullable String apiKey(Map<String, String> headers) {
    String auth = header(headers, "authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7) && auth.length() > 7) {
      return auth.substring(7).strip();
    }
    String key = header(headers, "x-api-key");
    return key == null || key.isBlank() ? null : key.strip();
  }

  private static @Nullable String header(Map<String, String> headers, String name) {
    String v = headers.get(name);
    if (v != null) {
      return v;
    }
    for (Map.Entry<String, String> e : headers.entrySet()) {
      if (e.getKey() != null && e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return null;
  }

  /** The lower-case hex SHA-256 of a key's UTF-8 bytes, as stored in {@code Tenant.spec.apiKeys[].sha256}. */
  public static String sha256Hex(String key) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(
          key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private static RequestRejectedException rejected(int status, String reason, @Nullable Duration retryAfter,
      String trace) {
    return new RequestRejectedException(status, reason, retryAfter, List.of(trace));
  }

  /** Configures {@link Governance}; not thread-safe. */
  public static final class Builder {
    private @Nullable YamlPolicyEngine engine;
    private @Nullable RateLimitStore store;
    private InstantSource clock = InstantSource.system();

    private Builder() {}

    /** The policy engine, whose configuration governance shares. */
    public Builder engine(YamlPolicyEngine engine) {
      this.engine = Objects.requireNonNull(engine, "engine");
      return this;
    }

    /** Where limits and budgets are counted. Default: the first found by ServiceLoader ({@code in-memory}). */
    public Builder rateLimitStore(RateLimitStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /** The wall clock for limit windows and budget periods. Default: the system clock. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Governance build() {
      if (engine == null) {
        throw new IllegalStateException("no engine: call engine(YamlPolicyEngine)");
      }
      return new Governance(this);
    }
  }
}
