package dev.kinference.vllm.metrics;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.endpoint.Health;
import dev.kinference.vllm.VllmLabels;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
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
 * <p>Thread-safe. Each metrics URI is polled by a daemon platform thread of its own that blocks on its exchange
 * ({@link HttpURLConnection}, keep-alive, no proxy): a scrape wakes one thread and hands nothing to another, which
 * costs about a sixth of the CPU of an asynchronous client's exchange (docs/PERFORMANCE.md), and a server that
 * hangs delays only its own scrapes. {@link #close} and removal stop a thread at its next wait; an exchange under
 * way ends within the {@link Builder#timeout timeout} and its result is dropped.
 */
public final class MetricsScraper implements FleetListener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MetricsScraper.class);

  /** Larger pages are refused: vLLM's, with every histogram, are tens of kilobytes. */
  static final int MAX_PAGE_BYTES = 16 << 20;

  /** What the scraper has done for one metrics URI. */
  public record TargetStats(URI uri, long scrapes, long failures, long healthChecks, long healthFailures,
      String lastFailure) {}

  private final Duration interval;
  private final double jitter;
  private final int timeoutMillis;
  private final Duration unhealthyAfter;
  private final Duration healthInterval;
  private final Map<URI, Target> targets = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private MetricsScraper(Builder b) {
    this.interval = b.interval;
    this.jitter = b.jitter;
    this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, b.timeout.toMillis()));
    this.unhealthyAfter = b.unhealthyAfter;
    this.healthInterval = b.healthInterval;
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
      t.start();
    }
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    targets.values().removeIf(t -> {
      t.members.removeIf(m -> m.state == endpoint);
      if (t.members.isEmpty()) {
        t.stop();
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

  /** Stops scraping. Idempotent; does not wait for an exchange under way. */
  @Override
  public void close() {
    closed = true;
    targets.values().forEach(Target::stop);
    targets.clear();
  }

  private long nextDelayNanos(Duration base) {
    double factor = 1 + jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
    return (long) (base.toNanos() * factor);
  }

  private record Member(EndpointState state, int rank) {}

  /** What one GET returned: its status, and the body when it was read. */
  private record Fetched(int status, String body) {}

  /**
   * One GET on the calling thread. The body of a 200 is read when {@code wanted} and always read to its end (or
   * the connection dropped), so the connection returns to the JDK's keep-alive cache for the next scrape.
   */
  private Fetched get(URI uri, boolean wanted) throws IOException {
    HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection(Proxy.NO_PROXY);
    c.setConnectTimeout(timeoutMillis);
    c.setReadTimeout(timeoutMillis);
    c.setInstanceFollowRedirects(false);
    c.setUseCaches(false);
    c.setRequestProperty("Accept", "text/plain");
    try {
      int status = c.getResponseCode();
      InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream();
      if (in == null) {
        return new Fetched(status, "");
      }
      try (in) {
        byte[] body = in.readNBytes(MAX_PAGE_BYTES + 1);
        if (body.length > MAX_PAGE_BYTES) {
          // disconnected below: the rest is not read, so the connection cannot be reused
          throw new IOException("page larger than " + MAX_PAGE_BYTES + " bytes");
        }
        return new Fetched(status, status == 200 && wanted ? new String(body, StandardCharsets.UTF_8) : "");
      }
    } catch (IOException | RuntimeException e) {
      c.disconnect();
      throw e;
    }
  }

  /** One metrics URI, the endpoints fed from it, and the thread that polls it. */
  private final class Target implements Runnable {
    final URI metricsUri;
    final URI healthUri;
    final List<Member> members = new CopyOnWriteArrayList<>();
    volatile boolean stopped;
    final AtomicLong scrapes = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong healthChecks = new AtomicLong();
    final AtomicLong healthFailures = new AtomicLong();
    volatile String lastFailure = "";
    // Touched only by this target's thread.
    long lastSuccessNanos = System.nanoTime();
    long nextHealthNanos = System.nanoTime();
    boolean metricsFailing;
    @Nullable String healthProblem;
    // Made by start(): a Target that loses the race to be registered for its URI never gets a thread.
    private volatile @Nullable Thread thread;

    Target(URI base) {
      this.metricsUri = base.resolve("/metrics");
      this.healthUri = base.resolve("/health");
    }

    void start() {
      thread = Thread.ofPlatform().daemon().name("kinference-metrics " + metricsUri.getAuthority()).start(this);
    }

    void stop() {
      stopped = true;
      Thread t = thread;
      if (t != null) {
        t.interrupt();
      }
    }

    /** Whether this target was removed or the scraper closed: what is fetched from then on is dropped. */
    private boolean halted() {
      return stopped || closed;
    }

    @Override
    public void run() {
      while (!halted()) {
        try {
          scrape();
          checkHealth();
        } catch (RuntimeException e) {
          LOG.warn("scraping {} failed", metricsUri, e);
        }
        long wakeAt = System.nanoTime() + nextDelayNanos(interval);
        for (long left; !halted() && (left = wakeAt - System.nanoTime()) > 0; ) {
          LockSupport.parkNanos(this, left);
          if (Thread.interrupted()) {
            break; // stopped; the loop's condition ends the thread
          }
        }
      }
    }

    private void scrape() {
      String failure;
      try {
        Fetched page = get(metricsUri, true);
        failure = page.status() == 200
            ? applyPage(page.body(), System.nanoTime())
            : "metrics answered HTTP " + page.status();
      } catch (IOException | RuntimeException e) {
        failure = "metrics request failed: " + rootMessage(e);
      }
      if (halted()) {
        return;
      }
      scrapes.incrementAndGet();
      long now = System.nanoTime();
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
      if (halted()) {
        return null;
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

    private void checkHealth() {
      long now = System.nanoTime();
      if (halted() || now - nextHealthNanos < 0) {
        return;
      }
      nextHealthNanos = now + healthInterval.toNanos();
      int status;
      try {
        status = get(healthUri, false).status();
      } catch (IOException | RuntimeException e) {
        // Not answering at all: the metrics scrape sees it too; counted there.
        status = -1;
      }
      if (halted()) {
        return;
      }
      healthChecks.incrementAndGet();
      if (status >= 500) {
        healthFailures.incrementAndGet();
        healthProblem = "health answered HTTP " + status;
      } else if (status > 0) {
        healthProblem = null;
      } else {
        healthFailures.incrementAndGet();
      }
      updateHealth(System.nanoTime());
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

    /** Timeout of connecting and of each read of an exchange; default 1 s. */
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
