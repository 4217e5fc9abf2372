package dev.kinference.gateway;

import dev.kinference.cloud.ExternalProviders;
import dev.kinference.cloud.PriceTable;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.RequestParser;
import dev.kinference.routing.Router;
import dev.kinference.routing.Usage;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An OpenAI- and Anthropic-compatible HTTP gateway in front of a {@link Router}'s fleet.
 *
 * <p>Serves {@code POST /v1/chat/completions}, {@code /v1/completions}, {@code /v1/messages},
 * {@code /v1/messages/count_tokens}, and {@code GET /v1/models}, {@code /health} (alive), {@code /ready} (some
 * endpoint is healthy), {@code /metrics} (Prometheus). A request goes through, in order:
 * <ol>
 *   <li>authentication by the {@link RequestGuard} (401/403), then the body, read up to the parser's limit
 *       (413) and parsed (400); the traffic class and priority are the caller's ({@link RequestGuard#traffic}),
 *       which headers {@code x-kinference-traffic-class} and {@code x-kinference-priority} only choose within
 *       (clamped; 400 when not a class or an integer);</li>
 *   <li>admission by the guard: model permissions and limits, reserved before the request (403/429 with
 *       {@code Retry-After});</li>
 *   <li>the router's decision (policy rules, candidates, cache-aware scoring; 404 for an unknown model, the
 *       policy's status for a rejection, 503 when nothing is available);</li>
 *   <li>if every endpoint the decision ranks is local and saturated, the gateway queue: ordered by priority,
 *       fair across tenants, batch last, until capacity frees (the request is routed afresh) or its wait ends
 *       (503 with {@code Retry-After}; 429 when the queue is full);</li>
 *   <li>the upstream attempt. Until the first content arrives nothing is sent to the client, so a refused or
 *       failed attempt (connection error, 5xx/429/401/403/404 status, an error event, a first-token timeout)
 *       moves to the decision's next alternate, the policy's fallbacks last. Streams are passed on event by
 *       event as they arrive, translated when the endpoint speaks the other API, and the next upstream chunk is
 *       read only once the client took the previous one (backpressure). After the first byte, a failure or an
 *       idle timeout ends the stream with an error event of the client's API; a client that goes away cancels the
 *       upstream request;</li>
 *   <li>the end: the router learns (first token, finish with the real usage, or failure), the reservation is
 *       settled with the real usage and cost, metrics are recorded, and one access-log line is written (logger
 *       {@code dev.kinference.gateway.access}).</li>
 * </ol>
 *
 * <p>Thread-safe. Requests are handled asynchronously: no thread waits on an upstream. A request with a small body
 * is handled on the I/O thread that read it (one per core, as an event-loop server has one worker per core), and
 * the same I/O threads carry the connections to local servers and read their answers ({@link UpstreamConnector});
 * larger bodies, token counting and the metrics page go to the server's pool (docs/PERFORMANCE.md, "The gateway
 * against nginx").
 */
public final class Gateway implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Gateway.class);


  final Router router;
  final Upstreams upstreams;
  final RequestGuard guard;
  final @Nullable UsageEndpoint usageEndpoint;
  private volatile boolean draining;
  final SlowClientGuard slowClients;
  private final SlowClientGuard.Settings slowClientSettings;
  private long lastSweepNanos;
  /** When the last inference request arrived; {@link #drain} waits for a quiet moment. */
  volatile long lastArrivalNanos = System.nanoTime() - QUIET_NANOS;
  private static final long QUIET_NANOS = 500_000_000L;
  final RequestParser parser;
  final GatewayMetrics metrics;
  final RequestRecorder recorder;
  final GatewayTracing tracing;
  final AdmissionQueue<Exchange> queue;
  final Duration queueMaxWait;
  final Duration requestTimeout;
  final PriceTable localPrices;
  final boolean accessLog;
  final boolean blockingPlugins;
  final boolean debugHeaders;
  final Set<Exchange> active = ConcurrentHashMap.newKeySet();
  /** Which endpoint holds each stored Responses API response, for requests that continue it. */
  final ResponseChains responseChains = ResponseChains.defaults();
  /** Pooling and tokenizer requests ({@link Pooling}) between their body's arrival and their answer's last byte. */
  final java.util.concurrent.atomic.AtomicInteger poolingActive = new java.util.concurrent.atomic.AtomicInteger();
  private final Server server;
  private final ServerConnector connector;
  private final @Nullable ServerConnector probeConnector;
  private final ScheduledExecutorService ticker;
  private final String host;
  private final int requestedPort;

  private Gateway(Builder b) {
    this.router = Objects.requireNonNull(b.router, "router");
    this.guard = b.guard;
    this.parser = b.parser;
    this.queue = new AdmissionQueue<>(b.queueCapacity);
    this.queueMaxWait = b.queueMaxWait;
    this.requestTimeout = b.requestTimeout;
    this.localPrices = b.localPrices;
    this.accessLog = b.accessLog;
    this.blockingPlugins = b.blockingPlugins;
    this.debugHeaders = b.debugHeaders;
    this.metrics = new GatewayMetrics(router.fleet(), router.cacheIndex(), queue::size, this::activeRequests);
    this.recorder = new RequestRecorder(metrics, accessLog);
    this.tracing = GatewayTracing.of(b.openTelemetry);
    if (guard instanceof GovernanceGuard governed) {
      StateStoreMetrics.register(metrics.registry, governed.governance());
      this.usageEndpoint = new UsageEndpoint(governed.governance(), b.adminKey);
    } else {
      this.usageEndpoint = null;
    }
    // By default a provider client's selector thread runs the response callbacks itself: they never block (writes to
    // clients are asynchronous), and each hand-off to another thread costs more than the work it would move.
    Executor executor = b.upstreamExecutor != null ? b.upstreamExecutor : Runnable::run;
    this.host = b.host;
    this.requestedPort = b.port;

    GatewayThreadPool pool = new GatewayThreadPool(b.maxThreads, Math.min(8, b.maxThreads));
    pool.setName("kinference-gateway");
    pool.setDaemon(true);
    this.server = new Server(pool);
    server.setStopTimeout(2000);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendDateHeader(false);
    this.slowClientSettings = b.slowClients;
    this.slowClients = new SlowClientGuard(b.slowClients);
    SlowClientGuard guardOfSlowClients = slowClients;
    HttpConnectionFactory h1 = new HttpConnectionFactory(http) {
      @Override
      public org.eclipse.jetty.io.Connection newConnection(org.eclipse.jetty.server.Connector connector,
          org.eclipse.jetty.io.EndPoint endPoint) {
        org.eclipse.jetty.io.Connection c = super.newConnection(connector, endPoint);
        guardOfSlowClients.opened(c);
        return c;
      }
    };
    // I/O (selector) threads run the handler, so one per core, as an event-loop server has one worker per core; at
    // most 16, and at most a quarter of the pool, which also runs the acceptors and everything handed off.
    int ioThreads = Math.max(1, Math.min(Math.min(16, Runtime.getRuntime().availableProcessors()), b.maxThreads / 4));
    if (b.maxConcurrentStreams > 0) {
      // h2c: HTTP/2 over cleartext, by prior knowledge or by upgrade, beside HTTP/1.1 on the same port.
      HTTP2CServerConnectionFactory h2c = new HTTP2CServerConnectionFactory(http);
      h2c.setMaxConcurrentStreams(b.maxConcurrentStreams);
      this.connector = new GatewayConnector(server, ioThreads, h1, h2c);
    } else {
      this.connector = new GatewayConnector(server, ioThreads, h1);
    }
    connector.setHost(host);
    connector.setPort(requestedPort);
    connector.setAcceptQueueSize(4096);
    // Jetty must not close a connection that waits for a slow first token: our own timeouts govern.
    connector.setIdleTimeout(Math.max(b.requestTimeout.toMillis(),
        Math.max(b.firstTokenTimeout.toMillis(), b.idleTimeout.toMillis())) + 5_000);
    server.addConnector(connector);
    if (b.probePort >= 0) {
      // Probes on their own connector: its acceptor and selector thread serve /health and /ready inline, whatever
      // load the main connector's I/O threads carry (a liveness probe must not time out under a burst).
      ServerConnector probes = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
      probes.setHost(host);
      probes.setPort(b.probePort);
      probes.setIdleTimeout(30_000);
      server.addConnector(probes);
      this.probeConnector = probes;
    } else {
      this.probeConnector = null;
    }
    this.upstreams = new Upstreams(b.providers, b.connectTimeout, b.firstTokenTimeout, b.idleTimeout,
        b.requestTimeout, executor, connector.getSelectorManager(), b.blockingPlugins);
    // A fixed handler tree makes the server, and so its connections, as non-blocking as the gateway's handler: the
    // I/O thread that reads a request handles it instead of handing its selecting over to another thread first.
    server.setDynamic(false);
    server.setHandler(new GatewayHandler(this));
    server.setErrorHandler(new ApiErrorHandler());
    this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-gateway-ticker");
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts serving.
   *
   * @throws IllegalStateException if the port cannot be bound
   */
  public Gateway start() {
    try {
      server.start();
    } catch (Exception e) {
      throw new IllegalStateException("gateway could not start on " + host + ":" + requestedPort + ": " + e, e);
    }
    var unused = ticker.scheduleWithFixedDelay(this::tick, 25, 25, TimeUnit.MILLISECONDS);
    log.info("Kinference gateway listening on {} ({} endpoints: {})", uri(), router.fleet().endpoints().size(),
        router.fleet().endpoints().stream().map(s -> s.endpoint().id()).toList());
    return this;
  }

  /** The port the gateway listens on (the bound one when 0 was asked for). */
  public int port() {
    return connector.getLocalPort();
  }

  /** The port of the probe connector ({@code /health}, {@code /ready}, {@code /metrics}), or -1 if none. */
  public int probePort() {
    ServerConnector p = probeConnector;
    return p == null ? -1 : p.getLocalPort();
  }

  /** Whether {@code connector} is the probe connector, which serves probes and metrics only. */
  boolean isProbeConnector(org.eclipse.jetty.server.Connector c) {
    return probeConnector != null && probeConnector.equals(c);
  }

  /** {@code http://host:port}, the base URL clients use (OpenAI SDKs append {@code /v1}). */
  public URI uri() {
    return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port());
  }

  public InetSocketAddress address() {
    return new InetSocketAddress(host, port());
  }

  public Router router() {
    return router;
  }

  /** The Prometheus text of {@code /metrics}. */
  public String scrapeMetrics() {
    return metrics.render();
  }

  /** Replaces the external providers, after a configuration reload; requests in flight keep theirs. */
  public void updateProviders(ExternalProviders providers) {
    upstreams.providers(Objects.requireNonNull(providers, "providers"));
  }

  /** Requests being handled now (queued, waiting for an upstream, or streaming). */
  public int activeRequests() {
    return active.size() + poolingActive.get();
  }

  /** Requests waiting in the gateway queue now. */
  public int queuedRequests() {
    return queue.size();
  }

  /** The cost of {@code usage} on {@code endpoint}: the provider's prices for external ones, else the table's. */
  double cost(Endpoint endpoint, Usage usage) {
    if (endpoint.isExternal()) {
      return upstreams.providers().cost(endpoint, usage);
    }
    return localPrices.cost(endpoint.model(), usage);
  }

  /** Timeouts and the queue: runs every 25 ms on the ticker thread. */
  private void tick() {
    try {
      long now = System.nanoTime();
      for (Exchange e : active) {
        e.checkTimeouts(now);
      }
      for (Exchange e : queue.expire(now)) {
        e.queueTimedOut();
      }
      drainQueue();
      if (now - lastSweepNanos > 250_000_000L) {
        lastSweepNanos = now;
        slowClients.sweep(now);
      }
    } catch (RuntimeException e) {
      log.warn("Gateway ticker failed", e);
    }
  }

  /** Lets waiting requests go where capacity freed. */
  void drainQueue() {
    if (queue.size() > 0) {
      queue.drain(Exchange::mayHaveCapacity, Exchange::leaveQueue);
    }
  }

  SlowClientGuard.Settings slowClientSettings() {
    return slowClientSettings;
  }

  /** Whether {@link #drain} was called: {@code /ready} answers 503, requests are still served. */
  public boolean draining() {
    return draining;
  }

  /**
   * Lets the requests in flight, streams included, run to their end: {@code /ready} fails at once (so that the
   * Service's endpoints drop this replica), new connections and requests are still served meanwhile (they arrive
   * until the endpoints have been updated), and this returns when nothing is in flight or {@code timeout} has
   * passed. Then {@link #close} stops the server. Thread-safe; returns whether everything finished.
   */
  public boolean drain(Duration timeout) throws InterruptedException {
    draining = true;
    long deadline = System.nanoTime() + timeout.toNanos();
    // a request whose client chose this replica just before the flag must not find the server gone: drained means
    // nothing in flight and nothing arrived for a moment
    while (activeRequests() > 0 || queue.size() > 0 || System.nanoTime() - lastArrivalNanos < QUIET_NANOS) {
      if (System.nanoTime() - deadline >= 0) {
        log.warn("Drain timeout ({} s) passed with {} requests in flight; they are cut", timeout.toSeconds(),
            activeRequests());
        return false;
      }
      Thread.sleep(50);
    }
    return true;
  }

  /** Stops accepting, fails what is in flight, and closes the upstream clients. Idempotent. */
  @Override
  public void close() {
    ticker.shutdownNow();
    try {
      server.stop();
    } catch (Exception e) {
      log.warn("Stopping the gateway's server failed", e);
    }
    upstreams.close();
    tracing.close();
  }

  /** Configures a {@link Gateway}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private @Nullable Router router;
    private ExternalProviders providers = ExternalProviders.none();
    private RequestGuard guard = RequestGuard.OPEN;
    private RequestParser parser = RequestParser.defaults();
    private String host = "127.0.0.1";
    private int port = 8080;
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration firstTokenTimeout = Duration.ofSeconds(60);
    private Duration idleTimeout = Duration.ofSeconds(60);
    private Duration requestTimeout = Duration.ofMinutes(10);
    private int queueCapacity = 1024;
    private Duration queueMaxWait = Duration.ofSeconds(30);
    private PriceTable localPrices = PriceTable.empty();
    private boolean accessLog = true;
    private boolean blockingPlugins;
    private boolean debugHeaders;
    private int maxThreads = 200;
    private int maxConcurrentStreams = 1024;
    private @Nullable String adminKey;
    private int probePort = -1;
    private SlowClientGuard.Settings slowClients = SlowClientGuard.Settings.DEFAULT;
    private @Nullable Executor upstreamExecutor;
    private io.opentelemetry.api.@Nullable OpenTelemetry openTelemetry;

    private Builder() {}

    /** The router, with its fleet; external providers' endpoints must be in that fleet to be used. Required. */
    public Builder router(Router router) {
      this.router = Objects.requireNonNull(router, "router");
      return this;
    }

    /** The external providers whose endpoints are in the router's fleet. Default none. */
    public Builder providers(ExternalProviders providers) {
      this.providers = Objects.requireNonNull(providers, "providers");
      return this;
    }

    /** Authentication, permissions and limits. Default {@link RequestGuard#OPEN}. */
    public Builder guard(RequestGuard guard) {
      this.guard = Objects.requireNonNull(guard, "guard");
      return this;
    }

    /** Body limits. Default {@link RequestParser#defaults()}. */
    public Builder parser(RequestParser parser) {
      this.parser = Objects.requireNonNull(parser, "parser");
      return this;
    }

    /** The address to bind. Default {@code 127.0.0.1}; {@code 0.0.0.0} to serve other hosts. */
    public Builder host(String host) {
      if (host == null || host.isBlank()) {
        throw new IllegalArgumentException("host must not be blank");
      }
      this.host = host;
      return this;
    }

    /** The port; 0 picks a free one. Default 8080. */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be in [0, 65535]: " + port);
      }
      this.port = port;
      return this;
    }

    /** Connecting to a local server. Default 2 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /** From sending a streamed request to its first content, before trying the next endpoint. Default 60 s. */
    public Builder firstTokenTimeout(Duration timeout) {
      this.firstTokenTimeout = positive(timeout, "firstTokenTimeout");
      return this;
    }

    /** The longest silence in a stream after its first content. Default 60 s. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idleTimeout");
      return this;
    }

    /** A non-streamed request's whole response, which servers send only when generation ends. Default 10 min. */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    /** How many requests may wait for saturated endpoints; 0 disables the queue. Default 1024. */
    public Builder queueCapacity(int capacity) {
      if (capacity < 0) {
        throw new IllegalArgumentException("queueCapacity must not be negative: " + capacity);
      }
      this.queueCapacity = capacity;
      return this;
    }

    /** How long a request may wait in the queue before 503. Default 30 s. */
    public Builder queueMaxWait(Duration wait) {
      this.queueMaxWait = positive(wait, "queueMaxWait");
      return this;
    }

    /** Prices of local models (for cost metrics and accounting). Default: free. */
    public Builder localPrices(PriceTable prices) {
      this.localPrices = Objects.requireNonNull(prices, "prices");
      return this;
    }

    /**
     * Where traces go. Default: an SDK configured from the standard {@code OTEL_*} variables when
     * {@code OTEL_TRACES_EXPORTER}, {@code OTEL_EXPORTER_OTLP_ENDPOINT} or {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}
     * is set (the gateway closes it), else none (the API's no-op). One given here is the caller's to close.
     */
    public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry openTelemetry) {
      this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
      return this;
    }

    /** Whether to write one access-log line per request. Default true. */
    public Builder accessLog(boolean enabled) {
      this.accessLog = enabled;
      return this;
    }

    /**
     * Whether responses say which internal endpoint served them and how much of the prompt it had cached ({@code
     * x-kinference-endpoint}, {@code x-kinference-cached-tokens}): for debugging, since they name internal servers.
     * Default false ({@code kinference serve --debug-headers} turns them on).
     */
    public Builder debugHeaders(boolean enabled) {
      this.debugHeaders = enabled;
      return this;
    }

    /** Server threads. Default 200. */
    public Builder maxThreads(int threads) {
      if (threads < 8) {
        throw new IllegalArgumentException("maxThreads must be at least 8: " + threads);
      }
      this.maxThreads = threads;
      return this;
    }

    /**
     * Streams one HTTP/2 connection may carry at once; 0 serves HTTP/1.1 only. Default 1024. HTTP/2 is offered in
     * cleartext (h2c, by prior knowledge or upgrade) for clients that multiplex many streams over few connections.
     */
    public Builder maxConcurrentStreams(int streams) {
      if (streams < 0) {
        throw new IllegalArgumentException("maxConcurrentStreams must not be negative: " + streams);
      }
      this.maxConcurrentStreams = streams;
      return this;
    }

    /**
     * Where external providers' responses are handled. Default: on their HTTP client's own thread, which suits
     * machines with few cores; give a pool (not a virtual-thread executor) to spread the work over many cores. Local
     * servers' responses are handled by the local client's own pool.
     */
    public Builder upstreamExecutor(Executor executor) {
      this.upstreamExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Whether a plugin on a request's path may block on I/O: the router's tokenizer (one that asks a server, such as
     * kinference-vllm's {@code RemoteTokenizer}), a rate-limit store shared over the network, a policy's classifier.
     * Default false: a request with a small body is parsed, governed and routed on the I/O thread that read it, which
     * also serves other connections, so a call that waits there makes them wait too. True: every request is handed
     * to the server's pool first, and so is every answer from a local server (settling the reservation, routing
     * queued requests and retries happen where the answer is handled), so a blocked call holds only its own thread
     * (about two thread switches more per request).
     */
    public Builder blockingPlugins(boolean mayBlock) {
      this.blockingPlugins = mayBlock;
      return this;
    }

    /**
     * The key that opens the admin API ({@code GET /admin/usage}); without one that API answers 404. Compared by
     * its SHA-256 in constant time, never logged.
     */
    public Builder adminKey(@Nullable String key) {
      this.adminKey = key == null || key.isBlank() ? null : key;
      return this;
    }

    /**
     * Deadlines for slow clients on HTTP/1.1: request headers complete within {@code headerTimeout} of their first
     * byte and a body within {@code bodyTimeout} of its headers (else 408 in the API's error format). Defaults 10 s
     * and 30 s. Connections resting between requests close after 60 s, and one client address keeps at most 256.
     */
    public Builder clientTimeouts(Duration headerTimeout, Duration bodyTimeout) {
      this.slowClients = new SlowClientGuard.Settings(positive(headerTimeout, "headerTimeout"),
          positive(bodyTimeout, "bodyTimeout"), slowClients.keepAliveTimeout(), slowClients.maxIdlePerClient());
      return this;
    }

    /**
     * A second port that serves {@code /health}, {@code /ready} and {@code /metrics} only, on a connector of its own
     * (0 picks a free one). Point Kubernetes probes at it: they are answered within milliseconds however busy the
     * main port's I/O threads are. Default: none (probes on the main port).
     */
    public Builder probePort(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("probePort must be 0 to 65535: " + port);
      }
      this.probePort = port;
      return this;
    }

    public Gateway build() {
      if (router == null) {
        throw new IllegalStateException("a gateway needs a router");
      }
      return new Gateway(this);
    }

    private static Duration positive(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
