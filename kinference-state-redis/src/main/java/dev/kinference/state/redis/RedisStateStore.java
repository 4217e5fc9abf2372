package dev.kinference.state.redis;

import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.limits.Demand;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.Reservation;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import dev.kinference.policy.limits.StateStores;
import dev.kinference.policy.limits.Window;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rate limits, concurrency leases, budgets and usage totals in a Redis-protocol server (Redis 7, Valkey 8), shared
 * by every gateway replica that points at it. Uses Lettuce, the maintained Redis client for the JVM, over one
 * multiplexed connection.
 *
 * <p>Each request step is one round trip: {@link #tryReserve} and {@link #settle} are each one atomic Lua script
 * (see the package documentation for the keys). Sliding windows and budget periods are computed from the server's
 * {@code TIME}, so replicas with skewed clocks count the same windows. Every key expires (sliding counters after
 * their window, budgets a day after their period, leases twice the lease time after their last renewal, usage
 * totals after 40 days, 400 days and 5 years for hours, days and months).
 *
 * <p>Concurrency limits are leases: a reservation's slot expires {@link Builder#leaseTime} (30 s by default) after
 * its last renewal; this process renews its live leases every third of that, so a replica that dies mid-request
 * frees its slots within the lease time.
 *
 * <p>Every call fails within {@link Builder#timeout} (500 ms by default; connecting: at most that too) with {@link
 * StateStoreUnavailableException}; while the connection is down commands are refused at once rather than queued.
 * Wrap the store in {@link dev.kinference.policy.limits.ResilientStateStore} to choose what requests see then.
 * Redis Cluster is not supported (the usage script writes keys it computes); use a standalone server, a managed
 * one, or Sentinel ({@code redis-sentinel://}).
 *
 * <p>Thread-safe: calls share the connection, which Lettuce pipelines.
 */
public final class RedisStateStore implements RateLimitStore {

  private static final Logger log = LoggerFactory.getLogger(RedisStateStore.class);
  private static final long HOUR_RETENTION_MS = Duration.ofDays(40).toMillis();
  private static final long DAY_RETENTION_MS = Duration.ofDays(400).toMillis();
  private static final long MONTH_RETENTION_MS = Duration.ofDays(5 * 366).toMillis();
  /** How long a settlement's id is remembered, so that a retry within it applies nothing twice. */
  private static final long OPERATION_MEMORY_MS = Duration.ofMinutes(10).toMillis();
  private static final long REPLAY_AGE_MS = Duration.ofMinutes(5).toMillis();

  private final RedisURI uri;
  private final String prefix;
  private final Duration timeout;
  private final Duration leaseTime;
  private final ClientResources resources;
  private final RedisClient client;
  private final Scripts scripts;
  private final String processId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong leaseSeq = new AtomicLong();
  private final ConcurrentHashMap<String, List<String[]>> liveLeases = new ConcurrentHashMap<>();
  private final ScheduledExecutorService renewer;
  private final Object connecting = new Object();
  private volatile @Nullable StatefulRedisConnection<String, String> connection;
  private volatile @Nullable StatefulRedisConnection<String, String> readConnection;
  private volatile long nextConnectAttemptNanos;

  private RedisStateStore(Builder b) {
    this.uri = b.uri;
    this.prefix = b.prefix;
    this.timeout = b.timeout;
    this.leaseTime = b.leaseTime;
    this.resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
    this.client = RedisClient.create(resources, uri);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).keepAlive(true).build())
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .build());
    this.scripts = new Scripts();
    this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-redis-lease-renewal");
      t.setDaemon(true);
      return t;
    });
    long every = Math.max(10, leaseTime.toMillis() / 3);
    var unused = renewer.scheduleWithFixedDelay(this::renewLeases, every, every, TimeUnit.MILLISECONDS);
  }

  /** A store at {@code uri} ({@code redis://[user:password@]HOST:PORT[/DB]}, {@code rediss://} for TLS). */
  public static Builder builder(String uri) {
    return new Builder(uri);
  }

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public boolean shared() {
    return true;
  }

  /** The server's address, without credentials. */
  public String address() {
    return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort() + "/" + uri.getDatabase();
  }

  @Override
  public String toString() {
    return "RedisStateStore[" + address() + "]";
  }

  // ---- limits ----

  @Override
  public Reservation tryReserve(List<Demand> demands, long nowMillis) {
    List<String> keys = new ArrayList<>(demands.size());
    List<String> args = new ArrayList<>(2 + demands.size() * 4);
    boolean leased = false;
    for (Demand d : demands) {
      leased |= d.window() instanceof Window.Concurrent;
    }
    // every grant has a ticket: it names the leases of concurrency demands and makes its settlement apply once
    String lease = processId + ":" + leaseSeq.incrementAndGet();
    args.add(lease);
    args.add(Long.toString(leaseTime.toMillis()));
    for (Demand d : demands) {
      keys.add(prefix + d.key());
      args.add(kind(d.window()));
      args.add(Long.toString(d.limit()));
      args.add(Long.toString(d.amount()));
      args.add(parameter(d.window()));
    }
    List<Object> r = scripts.run(Scripts.RESERVE, keys, args);
    if (number(r.get(0)) == 1) {
      long at = number(r.get(1));
      if (leased) {
        List<String[]> held = new ArrayList<>();
        for (Demand d : demands) {
          if (d.window() instanceof Window.Concurrent) {
            held.add(new String[] {prefix + d.key(), lease + "|" + d.amount()});
          }
        }
        liveLeases.put(lease, held);
      }
      return new Reservation.Granted(demands, at, lease);
    }
    int index = (int) number(r.get(1));
    return new Reservation.Refused(demands.get(index), number(r.get(2)), Duration.ofMillis(number(r.get(3))));
  }

  @Override
  public void settle(Reservation.Granted granted, long[] actual, @Nullable UsageEntry usage, long nowMillis) {
    List<Demand> demands = granted.demands();
    if (actual.length != demands.size()) {
      throw new IllegalArgumentException("one actual amount per demand: " + demands.size() + " != " + actual.length);
    }
    if (!granted.ticket().isEmpty()) {
      liveLeases.remove(granted.ticket());
    }
    long[] reserved = new long[demands.size()];
    for (int i = 0; i < reserved.length; i++) {
      reserved[i] = demands.get(i).amount();
    }
    // a settlement replayed after an outage is booked at its own time, a live one at the server's
    long usageAt = Math.abs(nowMillis - System.currentTimeMillis()) > REPLAY_AGE_MS ? nowMillis : 0;
    String op = granted.ticket().isEmpty() ? "" : prefix + "op:settled:" + granted.ticket();
    write(granted.ticket(), op, granted.atMillis(), demands, reserved, actual, usage, usageAt);
  }

  @Override
  public void absorb(String id, List<Demand> demands, long[] amounts, @Nullable UsageEntry usage, long atMillis) {
    write("", id.isEmpty() ? "" : prefix + "op:absorbed:" + id, atMillis, demands, new long[demands.size()],
        amounts, usage, atMillis);
  }

  private void write(String lease, String op, long atMillis, List<Demand> demands, long[] reserved, long[] actual,
      @Nullable UsageEntry usage, long usageAtMillis) {
    List<String> keys = new ArrayList<>(demands.size());
    List<String> args = new ArrayList<>(16 + demands.size() * 4);
    args.add(lease);
    args.add(Long.toString(atMillis));
    args.add(Integer.toString(demands.size()));
    for (int i = 0; i < demands.size(); i++) {
      Demand d = demands.get(i);
      keys.add(prefix + d.key());
      args.add(kind(d.window()));
      args.add(Long.toString(reserved[i]));
      args.add(Long.toString(Math.max(0, actual[i])));
      args.add(parameter(d.window()));
    }
    args.add(op);
    args.add(Long.toString(OPERATION_MEMORY_MS));
    if (usage == null) {
      args.add("0");
    } else {
      args.add("1");
      args.add(prefix);
      args.add(usage.tenant());
      args.add(usage.model());
      args.add(usage.failed() ? "1" : "0");
      args.add(Long.toString(usage.inputTokens()));
      args.add(Long.toString(usage.cachedInputTokens()));
      args.add(Long.toString(usage.outputTokens()));
      args.add(Long.toString(usage.costMicros()));
      args.add(usage.currency());
      args.add(Long.toString(usageAtMillis));
      args.add(Long.toString(HOUR_RETENTION_MS));
      args.add(Long.toString(DAY_RETENTION_MS));
      args.add(Long.toString(MONTH_RETENTION_MS));
    }
    scripts.run(Scripts.SETTLE, keys, args);
  }

  @Override
  public long used(String key, Window window, long nowMillis) {
    // a demand of nothing against a limit of -1 is always refused, and a refusal reports what the counter holds in
    // the current window without changing it
    List<Object> r = scripts.run(Scripts.RESERVE, List.of(prefix + key),
        List.of("", Long.toString(leaseTime.toMillis()), kind(window), "-1", "0", parameter(window)));
    return number(r.get(2));
  }

  // ---- replicas' in-flight prefill ----

  /**
   * One script call: each endpoint's hash {@code PREFIX inflight:ENDPOINT} gets this replica's field ({@code
   * TOKENS|EXPIRES_AT}, on the server's clock), loses the fields that expired, and the others' fields are summed;
   * the hash itself expires {@code ttl} after its last write. On the requests' connection, which Lettuce pipelines,
   * so it waits behind no admission for long.
   */
  @Override
  public Map<String, Long> sharePendingPrefillTokens(String replica, Map<String, Long> own, Duration ttl) {
    if (replica.isEmpty() || replica.contains(" ")) {
      throw new IllegalArgumentException("replica id must be non-empty and have no spaces: '" + replica + "'");
    }
    if (ttl.toMillis() < 1) {
      throw new IllegalArgumentException("ttl must be at least 1 ms: " + ttl);
    }
    if (own.isEmpty()) {
      return Map.of();
    }
    List<String> ids = new ArrayList<>(own.keySet());
    List<String> keys = new ArrayList<>(ids.size());
    List<String> args = new ArrayList<>(ids.size() + 2);
    args.add(replica);
    args.add(Long.toString(ttl.toMillis()));
    for (String id : ids) {
      long tokens = Objects.requireNonNull(own.get(id));
      if (tokens < 0) {
        throw new IllegalArgumentException("pending prefill tokens at " + id + " must not be negative: " + tokens);
      }
      keys.add(prefix + "inflight:" + id);
      args.add(Long.toString(tokens));
    }
    List<Object> r = scripts.run(Scripts.SHARE, keys, args);
    Map<String, Long> out = new HashMap<>(ids.size() * 2);
    for (int i = 0; i < ids.size(); i++) {
      out.put(ids.get(i), i < r.size() ? number(r.get(i)) : 0L);
    }
    return out;
  }

  // ---- usage ----

  @Override
  public List<UsageTotal> usage(UsageQuery query) {
    StatefulRedisConnection<String, String> c = readConn();
    TreeSet<String> tenants = new TreeSet<>();
    if (query.tenant() != null) {
      tenants.add(query.tenant());
    } else {
      tenants.addAll(call(c.async().smembers(prefix + "usage:tenants")));
    }
    String granularity = query.granularity().yamlName();
    List<Instant> starts = query.periodStarts();
    Map<String, RedisFuture<Map<String, String>>> pending = new HashMap<>();
    for (String tenant : tenants) {
      for (Instant s : starts) {
        String key = prefix + "usage:" + tenant + ":" + granularity + ":" + s.toEpochMilli();
        pending.put(tenant + "\u0000" + s.toEpochMilli(), c.async().hgetall(key));
      }
    }
    List<UsageTotal> out = new ArrayList<>();
    for (String tenant : tenants) {
      for (Instant s : starts) {
        Map<String, String> h = call(Objects.requireNonNull(pending.get(tenant + "\u0000" + s.toEpochMilli())));
        if (h.isEmpty()) {
          continue;
        }
        long[] sums = new long[6];
        for (Map.Entry<String, String> e : h.entrySet()) {
          int bar = e.getKey().lastIndexOf('|');
          if (bar < 0 || (query.model() != null && !e.getKey().substring(0, bar).equals(query.model()))) {
            continue;
          }
          int field = switch (e.getKey().substring(bar + 1)) {
            case "requests" -> 0;
            case "errors" -> 1;
            case "input" -> 2;
            case "cached" -> 3;
            case "output" -> 4;
            case "cost" -> 5;
            default -> -1;
          };
          if (field >= 0) {
            sums[field] += Long.parseLong(e.getValue());
          }
        }
        if (sums[0] == 0) {
          continue;
        }
        out.add(new UsageTotal(tenant, query.model() == null ? "*" : query.model(), s,
            query.granularity().end(s), sums[0], sums[1], sums[2], sums[3], sums[4], sums[5],
            h.getOrDefault("currency", "USD")));
      }
    }
    out.sort(Comparator.comparing(UsageTotal::tenant).thenComparing(UsageTotal::from));
    return out;
  }

  // ---- connection ----

  @Override
  public boolean ping() {
    try {
      return "PONG".equals(call(conn().async().ping()));
    } catch (StateStoreUnavailableException e) {
      return false;
    }
  }

  @Override
  public void close() {
    renewer.shutdownNow();
    for (StatefulRedisConnection<String, String> c : java.util.Arrays.asList(connection, readConnection)) {
      if (c != null) {
        c.close();
      }
    }
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    var unused = resources.shutdown(0, 2, TimeUnit.SECONDS);
  }

  /** The connection of requests' reservations and settlements. */
  StatefulRedisConnection<String, String> conn() {
    StatefulRedisConnection<String, String> c = connection;
    return c != null ? c : connect(false);
  }

  /** A second connection for reads (usage queries), so that a large one does not delay admissions. */
  private StatefulRedisConnection<String, String> readConn() {
    StatefulRedisConnection<String, String> c = readConnection;
    return c != null ? c : connect(true);
  }

  /** Makes a connection on first use; after a failed attempt, tries again at most once a second. */
  private StatefulRedisConnection<String, String> connect(boolean forReads) {
    synchronized (connecting) {
      StatefulRedisConnection<String, String> c = forReads ? readConnection : connection;
      if (c != null) {
        return c;
      }
      long now = System.nanoTime();
      if (now - nextConnectAttemptNanos < 0) {
        throw new StateStoreUnavailableException("not connected to " + address() + " (retrying)");
      }
      try {
        c = client.connect();
        if (forReads) {
          readConnection = c;
        } else {
          connection = c;
          log.info("Connected to the state store at {}", address());
        }
        return c;
      } catch (RedisException e) {
        nextConnectAttemptNanos = now + TimeUnit.SECONDS.toNanos(1);
        throw new StateStoreUnavailableException("cannot connect to " + address() + ": " + rootMessage(e), e);
      }
    }
  }

  <T> T call(RedisFuture<T> future) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new StateStoreUnavailableException(address() + " did not answer within " + timeout.toMillis() + " ms",
          e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      if (cause instanceof RedisNoScriptException noScript) {
        throw noScript;
      }
      throw new StateStoreUnavailableException(address() + ": " + rootMessage(cause), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StateStoreUnavailableException("interrupted while calling " + address(), e);
    } catch (RedisException e) {
      throw new StateStoreUnavailableException(address() + ": " + rootMessage(e), e);
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable x = t;
    for (Throwable cause = x.getCause(); cause != null && !cause.equals(x); cause = x.getCause()) {
      x = cause;
    }
    String m = x.getMessage();
    return StateStores.redact(m == null ? x.getClass().getSimpleName() : m);
  }

  private void renewLeases() {
    if (liveLeases.isEmpty()) {
      return;
    }
    List<String> keys = new ArrayList<>();
    List<String> args = new ArrayList<>();
    args.add(Long.toString(leaseTime.toMillis()));
    for (List<String[]> held : liveLeases.values()) {
      for (String[] km : held) {
        keys.add(km[0]);
        args.add(km[1]);
      }
    }
    try {
      scripts.run(Scripts.RENEW, keys, args);
    } catch (StateStoreUnavailableException e) {
      log.debug("Lease renewal failed: {}", e.getMessage());
    } catch (RuntimeException e) {
      log.warn("Lease renewal failed", e);
    }
  }

  private static String kind(Window w) {
    return switch (w) {
      case Window.Sliding s -> "s";
      case Window.Period p -> "p";
      case Window.Concurrent c -> "c";
    };
  }

  private static String parameter(Window w) {
    return switch (w) {
      case Window.Sliding s -> Long.toString(s.length().toMillis());
      case Window.Period p -> p.calendar().yamlName();
      case Window.Concurrent c -> "";
    };
  }

  private static long number(Object o) {
    return o instanceof Long l ? l : Long.parseLong(String.valueOf(o));
  }

  /** The Lua scripts, loaded once from the module's resources and called by their SHA-1. */
  private final class Scripts {
    static final String RESERVE = "reserve";
    static final String SETTLE = "settle";
    static final String RENEW = "renew";
    static final String SHARE = "share";

    private final Map<String, String> text = new HashMap<>();
    private final Map<String, String> sha = new ConcurrentHashMap<>();

    Scripts() {
      String calendar = resource("calendar.lua");
      for (String name : List.of(RESERVE, SETTLE, RENEW, SHARE)) {
        text.put(name, calendar + "\n" + resource(name + ".lua"));
      }
    }

    List<Object> run(String name, List<String> keys, List<String> args) {
      StatefulRedisConnection<String, String> c = conn();
      String[] k = keys.toArray(String[]::new);
      String[] a = args.toArray(String[]::new);
      String script = Objects.requireNonNull(text.get(name));
      String digest = sha.computeIfAbsent(name, n -> c.sync().digest(script));
      Object result;
      try {
        result = call(c.async().<Object>evalsha(digest, ScriptOutputType.MULTI, k, a));
      } catch (RedisNoScriptException e) {
        // a restarted or flushed server: send the script itself, which also caches it again
        result = call(c.async().<Object>eval(script, ScriptOutputType.MULTI, k, a));
      }
      if (result instanceof List<?> list) {
        return new ArrayList<>(list);
      }
      List<Object> one = new ArrayList<>(1);
      one.add(result);
      return one;
    }

    private String resource(String file) {
      try (var in = RedisStateStore.class.getResourceAsStream(file)) {
        if (in == null) {
          throw new IllegalStateException("missing script " + file);
        }
        return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      } catch (java.io.IOException e) {
        throw new IllegalStateException("cannot read script " + file, e);
      }
    }
  }

  /** Configures a {@link RedisStateStore}; not thread-safe. */
  public static final class Builder {
    private final RedisURI uri;
    private final boolean hasPassword;
    private String prefix = "kinference:";
    private Duration timeout = StateStores.DEFAULT_TIMEOUT;
    private Duration leaseTime = Duration.ofSeconds(30);

    private Builder(String uriText) {
      String userInfo = null;
      try {
        userInfo = new java.net.URI(uriText).getRawUserInfo();
      } catch (java.net.URISyntaxException e) {
        // RedisURI.create says what is wrong
      }
      this.hasPassword = userInfo != null && !userInfo.isEmpty();
      try {
        this.uri = RedisURI.create(uriText);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("not a Redis URI: " + StateStores.redact(uriText) + " ("
            + e.getMessage() + ")", e);
      }
    }

    /** A password for a URI that has none (for example from {@code KINFERENCE_STATE_STORE_PASSWORD}). */
    public Builder password(@Nullable String password) {
      if (password != null && !password.isEmpty() && !hasPassword) {
        uri.setAuthentication(password.toCharArray());
      }
      return this;
    }

    /** Prefixed to every key, so that several deployments can share a server. Default {@code kinference:}. */
    public Builder keyPrefix(String prefix) {
      if (prefix.isEmpty() || prefix.contains(" ")) {
        throw new IllegalArgumentException("keyPrefix must be non-empty and have no spaces: '" + prefix + "'");
      }
      this.prefix = prefix;
      return this;
    }

    /** The longest one call may take, connecting included. Default 500 ms; 1 ms to 1 min. */
    public Builder timeout(Duration timeout) {
      if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("timeout must be 1 ms to 1 min: " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /**
     * How long a concurrency slot outlives its last renewal; renewed every third of it. Default 30 s; 1 s to 10
     * min.
     */
    public Builder leaseTime(Duration leaseTime) {
      if (leaseTime.toMillis() < 1000 || leaseTime.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("leaseTime must be 1 s to 10 min: " + leaseTime);
      }
      this.leaseTime = leaseTime;
      return this;
    }

    /** The store; it connects on first use, so an unreachable server does not fail this call. */
    public RedisStateStore build() {
      return new RedisStateStore(this);
    }
  }
}
