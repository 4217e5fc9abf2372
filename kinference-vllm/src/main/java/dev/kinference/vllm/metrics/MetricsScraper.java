package dev.kinference.vllm.metrics;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.endpoint.Health;
import dev.kinference.vllm.VllmLabels;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Polls every fleet member's {@code /metrics} (and, less often, {@code /health}) and keeps its
 * {@link EndpointState} current: {@link EndpointState#updateMetrics} after each good scrape, and
 * {@link EndpointState#updateHealth} as the server stops and starts answering.
 *
 * <p>Endpoints sharing a metrics URI (the data-parallel ranks of one server, {@link VllmLabels#DATA_PARALLEL_RANK})
 * are scraped once per interval, each taking its own engine's samples. Each target is polled every
 * {@link Builder#interval interval} (default 50 ms) times a random factor in [1 - jitter, 1 + jitter] (default
 * 0.2), counted from the end of the previous scrape, so a slow server is never asked twice at once and scrapes of
 * many servers spread out.
 *
 * <p>Health, in order:
 * <ol>
 *   <li>a scrape that fails (connection refused, timeout, status other than 200, a page that does not parse)
 *       leaves the last metrics in place; they grow stale, which the router's freshness filter and saturation
 *       check see;</li>
 *   <li>once no scrape has succeeded for {@link Builder#unhealthyAfter unhealthyAfter} (default 1 s), the
 *       endpoint is marked {@link Health#UNHEALTHY} with the last failure as reason;</li>
 *   <li>{@code /health} answering 5xx (vLLM's 503 when its engine died) marks it unhealthy at once, even while
 *       {@code /metrics} still answers;</li>
 *   <li>when a scrape succeeds and {@code /health} did not last say 5xx, it is {@link Health#HEALTHY} again. A
 *       draining endpoint stays draining.</li>
 * </ol>
 *
 * <p>Thread-safe. One scheduler thread; HTTP exchanges run on the client's executor.
 */
public final class MetricsScraper implements FleetListener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MetricsScraper.class);

  /** What the scraper has done for one metrics URI. */
  public record TargetStats(URI uri, long scrapes, long failures, long healthChecks, long healthFailures,
      String lastFailure) {}

  private final Duration interval;
  private final double jitter;
  private final Duration timeout;
  private final Duration unhealthyAfter;
  private final Duration healthInterval;
  private final HttpClient client;
  private final boolean ownClient;
  private final ScheduledExecutorService scheduler;
  private final Map<URI, Target> targets = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private final java.util.concurrent.@Nullable ExecutorService clientExecutor;

  private MetricsScraper(Builder b) {
    this.interval = b.interval;
    this.jitter = b.jitter;
    this.timeout = b.timeout;
    this.unhealthyAfter = b.unhealthyAfter;
    this.healthInterval = b.healthInterval;
    HttpClient c = b.client;
    this.ownClient = c == null;
    // HttpClient.close() leaves a supplied executor running: it is closed with the client.
    this.clientExecutor = c != null ? null : Executors.newVirtualThreadPerTaskExecutor();
    this.client = c != null ? c : HttpClient.newBuilder()
        .connectTimeout(b.timeout)
        .version(HttpClient.Version.HTTP_1_1)
        .executor(java.util.Objects.requireNonNull(clientExecutor))
        .build();
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-metrics-scraper");
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Registers with {@code fleet}; current members are scraped at once. Returns this. */
  public MetricsScraper attach(Fleet fleet) {
    fleet.addListener(this);
    return this;
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    if (closed || endpoint.endpoint().isExternal()) {
      return;
    }
    URI base;
    int rank;
    try {
      base = VllmLabels.metricsBase(endpoint.endpoint());
      rank = VllmLabels.dataParallelRank(endpoint.endpoint());
    } catch (IllegalArgumentException e) {
      LOG.warn("cannot scrape {}: {}", endpoint.id(), e.getMessage());
      return;
    }
    Target fresh = new Target(base);
    Target t = targets.computeIfAbsent(base, k -> fresh);
    t.members.add(new Member(endpoint, rank));
    if (t == fresh) {
      scheduler.execute(t::scrape);
    }
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    targets.values().removeIf(t -> {
      t.members.removeIf(m -> m.state == endpoint);
      if (t.members.isEmpty()) {
        t.stopped = true;
        return true;
      }
      return false;
    });
  }

  /** Statistics per metrics URI. */
  public Map<URI, TargetStats> stats() {
    Map<URI, TargetStats> out = new TreeMap<>();
    targets.forEach((uri, t) -> out.put(uri, new TargetStats(uri, t.scrapes.get(), t.failures.get(),
        t.healthChecks.get(), t.healthFailures.get(), t.lastFailure)));
    return out;
  }

  /** Stops scraping. Idempotent. */
  @Override
  public void close() {
    closed = true;
    targets.values().forEach(t -> t.stopped = true);
    targets.clear();
    scheduler.shutdownNow();
    if (ownClient) {
      client.close();
    }
    if (clientExecutor != null) {
      clientExecutor.close();
    }
  }

  private long nextDelayNanos(Duration base) {
    double factor = 1 + jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
    return (long) (base.toNanos() * factor);
  }

  private record Member(EndpointState state, int rank) {}

  /** One metrics URI and the endpoints fed from it. */
  private final class Target {
    final URI metricsUri;
    final URI healthUri;
    final List<Member> members = new CopyOnWriteArrayList<>();
    volatile boolean stopped;
    final AtomicLong scrapes = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong healthChecks = new AtomicLong();
    final AtomicLong healthFailures = new AtomicLong();
    volatile String lastFailure = "";
    // Touched by one scrape at a time (the next one is scheduled when this one ends).
    long lastSuccessNanos = System.nanoTime();
    long nextHealthNanos = System.nanoTime();
    boolean metricsFailing;
    @Nullable String healthProblem;

    Target(URI base) {
      this.metricsUri = base.resolve("/metrics");
      this.healthUri = base.resolve("/health");
    }

    void scrape() {
      if (stopped || closed) {
        return;
      }
      HttpRequest request = HttpRequest.newBuilder(metricsUri).timeout(timeout).GET()
          .header("Accept", "text/plain").build();
      Future<?> unused = client.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
          .whenComplete((response, error) -> {
            try {
              onMetrics(response, error);
            } catch (RuntimeException e) {
              LOG.warn("scraping {} failed", metricsUri, e);
            } finally {
              checkHealthThenReschedule();
            }
          });
    }

    private void onMetrics(@Nullable HttpResponse<String> response, @Nullable Throwable error) {
      scrapes.incrementAndGet();
      long now = System.nanoTime();
      String failure;
      if (error != null) {
        failure = "metrics request failed: " + rootMessage(error);
      } else if (response == null || response.statusCode() != 200) {
        failure = "metrics answered HTTP " + (response == null ? "nothing" : response.statusCode());
      } else {
        failure = applyPage(response.body(), now);
      }
      if (failure == null) {
        lastSuccessNanos = now;
        metricsFailing = false;
      } else {
        failures.incrementAndGet();
        lastFailure = failure;
        metricsFailing = true;
      }
      updateHealth(now);
    }

    /** Returns null on success, else why the page was not used. */
    private @Nullable String applyPage(String page, long now) {
      Map<String, VllmMetrics.Engine> engines;
      try {
        engines = VllmMetrics.parse(page);
      } catch (PrometheusFormatException e) {
        return "metrics page does not parse: " + e.getMessage();
      }
      String failure = null;
      for (Member m : members) {
        try {
          m.state.updateMetrics(VllmMetrics.select(engines, m.rank, now));
        } catch (PrometheusFormatException e) {
          failure = e.getMessage();
        }
      }
      return failure;
    }

    private void checkHealthThenReschedule() {
      if (stopped || closed) {
        return;
      }
      long now = System.nanoTime();
      if (now - nextHealthNanos < 0) {
        reschedule();
        return;
      }
      nextHealthNanos = now + healthInterval.toNanos();
      HttpRequest request = HttpRequest.newBuilder(healthUri).timeout(timeout).GET().build();
      Future<?> unused = client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
        try {
          healthChecks.incrementAndGet();
          if (error == null && response != null && response.statusCode() >= 500) {
            healthFailures.incrementAndGet();
            healthProblem = "health answered HTTP " + response.statusCode();
          } else if (error == null) {
            healthProblem = null;
          } else {
            // Not answering at all: the metrics scrape sees it too; counted there.
            healthFailures.incrementAndGet();
          }
          updateHealth(System.nanoTime());
        } finally {
          reschedule();
        }
      });
    }

    private void reschedule() {
      if (stopped || closed) {
        return;
      }
      try {
        Future<?> unused = scheduler.schedule(this::scrape, nextDelayNanos(interval), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closed meanwhile
      }
    }

    private void updateHealth(long now) {
      String problem = healthProblem;
      Health health;
      String reason;
      if (problem != null) {
        health = Health.UNHEALTHY;
        reason = problem;
      } else if (metricsFailing && now - lastSuccessNanos > unhealthyAfter.toNanos()) {
        health = Health.UNHEALTHY;
        reason = lastFailure + " (no good scrape for " + Duration.ofNanos(now - lastSuccessNanos).toMillis()
            + " ms)";
      } else if (!metricsFailing) {
        health = Health.HEALTHY;
        reason = "";
      } else {
        return; // failing, but not for long enough: stale, not yet unhealthy
      }
      for (Member m : members) {
        Health before = m.state.health();
        m.state.updateHealth(health, reason);
        if (before != m.state.health()) {
          if (health == Health.UNHEALTHY) {
            LOG.warn("endpoint {} is unhealthy: {}", m.state.id(), reason);
          } else {
            LOG.info("endpoint {} is healthy again", m.state.id());
          }
        }
      }
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    for (int depth = 0; depth < 16 && root.getCause() != null; depth++) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return root.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  /** Builds a {@link MetricsScraper}; not thread-safe. */
  public static final class Builder {
    private Duration interval = Duration.ofMillis(50);
    private double jitter = 0.2;
    private Duration timeout = Duration.ofSeconds(1);
    private Duration unhealthyAfter = Duration.ofSeconds(1);
    private Duration healthInterval = Duration.ofSeconds(1);
    private @Nullable HttpClient client;

    private Builder() {}

    /** Time between the end of one scrape of a server and the start of the next; default 50 ms. */
    public Builder interval(Duration interval) {
      this.interval = positive(interval, "interval");
      return this;
    }

    /** Random spread of the interval, as a fraction in [0, 1); default 0.2. */
    public Builder jitter(double jitter) {
      if (!(jitter >= 0 && jitter < 1)) {
        throw new IllegalArgumentException("jitter must be in [0, 1): " + jitter);
      }
      this.jitter = jitter;
      return this;
    }

    /** Timeout of each HTTP request (and connection); default 1 s. */
    public Builder timeout(Duration timeout) {
      this.timeout = positive(timeout, "timeout");
      return this;
    }

    /** How long without a good scrape before an endpoint is marked unhealthy; default 1 s. */
    public Builder unhealthyAfter(Duration after) {
      this.unhealthyAfter = positive(after, "unhealthyAfter");
      return this;
    }

    /** Time between {@code /health} checks of a server; default 1 s. */
    public Builder healthInterval(Duration interval) {
      this.healthInterval = positive(interval, "healthInterval");
      return this;
    }

    /** The HTTP client to use (not closed by the scraper); by default the scraper makes and closes its own. */
    public Builder httpClient(HttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    public MetricsScraper build() {
      return new MetricsScraper(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }

  /** For logs and tests. */
  @Override
  public String toString() {
    List<String> uris = new ArrayList<>();
    targets.keySet().forEach(u -> uris.add(u.toString()));
    return "MetricsScraper" + uris;
  }
}
