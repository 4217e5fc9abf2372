package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a local copy of one collection of API objects (such as the EndpointSlices of a Service) with the
 * Kubernetes list-then-watch protocol, on its own thread:
 * <ol>
 *   <li>list (in pages), remember the list's {@code resourceVersion};</li>
 *   <li>watch from that version with {@code allowWatchBookmarks}; apply ADDED, MODIFIED and DELETED; a BOOKMARK
 *       only advances the version, so that a reconnect resumes from there instead of relisting;</li>
 *   <li>when the watch ends (server timeout), watch again from the last version at once;</li>
 *   <li>when the version is too old (410 Gone, as an HTTP status or an ERROR event), list again;</li>
 *   <li>when the connection fails or goes silent, reconnect after an exponential backoff with jitter, which
 *       resets once events flow again. The last known objects stay in force meanwhile.</li>
 * </ol>
 * The listener is called on the watcher's thread with the complete current set after the first list and after
 * every change. Thread-safe: {@link #close} may be called from any thread.
 */
final class ResourceWatcher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ResourceWatcher.class);

  /** Receives the complete current objects, keyed {@code namespace/name}; the map is valid during the call only. */
  interface Listener {
    void onObjects(Map<String, JsonNode> objects);
  }

  /**
   * How a watcher behaves.
   *
   * @param transport how watches are carried
   * @param initialBackoff first delay after a failure
   * @param maxBackoff largest delay after repeated failures
   * @param watchTimeout the {@code timeoutSeconds} asked of the server, randomised up to twice this, as client-go
   *     does, so that many replicas do not reconnect in step
   * @param idleTimeout a watch that delivers nothing (not even a bookmark) for this long is presumed dead
   * @param pageSize items per list page ({@code limit})
   */
  record Options(WatchTransport transport, Duration initialBackoff, Duration maxBackoff, Duration watchTimeout,
      Duration idleTimeout, int pageSize) {

    /** The check every builder's {@code backoff(initial, max)} makes at once, so a bad value fails where set. */
    static void checkBackoff(Duration initial, Duration max) {
      if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
        throw new IllegalArgumentException("backoff must be positive and max >= initial: " + initial + ", " + max);
      }
    }

    static final Options DEFAULT = new Options(WatchTransport.HTTP_STREAM, Duration.ofMillis(500),
        Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofMinutes(11), 500);

    Options {
      Objects.requireNonNull(transport, "transport");
      checkBackoff(initialBackoff, maxBackoff);
      if (watchTimeout.toSeconds() < 1 || idleTimeout.isNegative() || idleTimeout.isZero()) {
        throw new IllegalArgumentException("watch timeout must be at least 1 s and idle timeout positive");
      }
      if (pageSize < 1) {
        throw new IllegalArgumentException("pageSize must be positive: " + pageSize);
      }
    }
  }

  /** Counters, for tests and diagnostics. */
  record Stats(long lists, long watches, long events, long bookmarks, long relistsAfterGone, long failures) {}

  private final String name;
  private final ApiClient client;
  private final String path;
  private final Map<String, String> selectors;
  private final Options options;
  private final Listener listener;
  private final RandomGenerator random;
  private final Thread thread;
  private final Map<String, JsonNode> objects = new LinkedHashMap<>();
  private final Map<String, JsonNode> view = Collections.unmodifiableMap(objects);
  private final AtomicLong lists = new AtomicLong();
  private final AtomicLong watches = new AtomicLong();
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong bookmarks = new AtomicLong();
  private final AtomicLong gone = new AtomicLong();
  private final AtomicLong failureCount = new AtomicLong();
  private volatile boolean closed;
  private volatile @Nullable String resourceVersion;
  private volatile ApiClient.@Nullable WatchStream current;
  private int consecutiveFailures;

  /**
   * @param path the collection, such as {@code /apis/discovery.k8s.io/v1/namespaces/ns/endpointslices}
   * @param selectors {@code labelSelector} and {@code fieldSelector} query parameters, if any
   */
  ResourceWatcher(String name, ApiClient client, String path, Map<String, String> selectors, Options options,
      Listener listener, RandomGenerator random) {
    this.name = name;
    this.client = client;
    this.path = path;
    this.selectors = Map.copyOf(selectors);
    this.options = options;
    this.listener = listener;
    this.random = random;
    this.thread = new Thread(this::run, "kinference-k8s-watch-" + name);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  String name() {
    return name;
  }

  /** The version the next watch resumes from, or null before the first list and after a 410. */
  @Nullable String resourceVersion() {
    return resourceVersion;
  }

  Stats stats() {
    return new Stats(lists.get(), watches.get(), events.get(), bookmarks.get(), gone.get(), failureCount.get());
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    ApiClient.WatchStream s = current;
    if (s != null) {
      s.close();
    }
    thread.interrupt();
    if (Thread.currentThread() != thread) {
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void run() {
    boolean staleToken = false;
    while (!closed) {
      try {
        if (resourceVersion == null) {
          list();
        }
        boolean productive = watchOnce(staleToken);
        staleToken = false;
        if (!productive) {
          // The server ended a watch that brought nothing: do not spin.
          pause("watch ended without events");
        }
      } catch (ApiException e) {
        if (closed) {
          break;
        }
        if (e.isGone()) {
          gone.incrementAndGet();
          log.info("{}: resource version {} expired (410 Gone); listing again", name, resourceVersion);
          resourceVersion = null;
          continue;
        }
        staleToken = e.status() == 401;
        failed(e);
      } catch (IOException | RuntimeException e) {
        if (closed) {
          break;
        }
        failed(e);
      } catch (InterruptedException e) {
        if (closed) {
          break;
        }
        Thread.currentThread().interrupt();
        break;
      }
    }
  }

  private void failed(Exception e) {
    failureCount.incrementAndGet();
    consecutiveFailures++;
    String message = e.getMessage();
    String what = e instanceof ApiException && message != null ? message : e.toString();
    if (consecutiveFailures <= 3 || consecutiveFailures % 20 == 0) {
      log.warn("{}: {} (failure {} in a row); keeping the last known objects and retrying", name, what,
          consecutiveFailures);
    }
    pause(what);
  }

  private void pause(String why) {
    long delay = backoffMillis(consecutiveFailures);
    log.debug("{}: waiting {} ms ({})", name, delay, why);
    try {
      Thread.sleep(delay);
    } catch (InterruptedException e) {
      if (!closed) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Exponential backoff with "equal jitter": a delay in [d/2, d] for d = initial * 2^(failures-1), capped. */
  long backoffMillis(int failures) {
    long initial = options.initialBackoff().toMillis();
    long max = options.maxBackoff().toMillis();
    int shift = Math.max(0, Math.min(30, failures - 1));
    long d = Math.min(max, initial << shift);
    long half = Math.max(1, d / 2);
    return half + random.nextLong(half + 1);
  }

  private void list() throws IOException, InterruptedException {
    Map<String, JsonNode> fresh = new LinkedHashMap<>();
    String cont = null;
    String version;
    do {
      Map<String, String> q = new LinkedHashMap<>(selectors);
      q.put("limit", Integer.toString(options.pageSize()));
      if (cont != null) {
        q.put("continue", cont);
      }
      JsonNode page = client.get(path, q);
      for (JsonNode item : page.path("items")) {
        String key = key(item);
        if (key != null) {
          fresh.put(key, item);
        }
      }
      version = page.path("metadata").path("resourceVersion").asText("");
      cont = page.path("metadata").path("continue").asText("");
    } while (!cont.isEmpty() && !closed);
    lists.incrementAndGet();
    consecutiveFailures = 0;
    objects.clear();
    objects.putAll(fresh);
    // An empty version (some test servers) means "from now": watch without one, then keep what events carry.
    resourceVersion = version;
    log.debug("{}: listed {} objects at version {}", name, fresh.size(), version);
    notifyListener();
  }

  /** One watch until the server ends it. Returns whether it delivered anything. */
  private boolean watchOnce(boolean staleToken) throws IOException, InterruptedException {
    Map<String, String> q = new LinkedHashMap<>(selectors);
    q.put("watch", "true");
    String rv = resourceVersion;
    if (rv != null && !rv.isEmpty()) {
      q.put("resourceVersion", rv);
    }
    q.put("allowWatchBookmarks", "true");
    long timeout = options.watchTimeout().toSeconds();
    q.put("timeoutSeconds", Long.toString(timeout + random.nextLong(timeout + 1)));
    watches.incrementAndGet();
    boolean productive = false;
    try (ApiClient.WatchStream stream = client.watch(path, q, options.transport(), staleToken)) {
      current = stream;
      if (closed) {
        return true;
      }
      String line;
      while ((line = stream.next(options.idleTimeout())) != null) {
        if (closed) {
          return true;
        }
        apply(line);
        if (!productive) {
          productive = true;
          consecutiveFailures = 0;
        }
      }
    } finally {
      current = null;
    }
    return productive;
  }

  private void apply(String line) throws IOException {
    JsonNode event;
    try {
      event = ApiClient.JSON.readTree(line);
    } catch (IOException e) {
      throw new IOException("malformed watch event (" + e.getMessage() + "): "
          + line.substring(0, Math.min(200, line.length())), e);
    }
    String type = event.path("type").asText("");
    JsonNode object = event.path("object");
    events.incrementAndGet();
    switch (type) {
      case "ADDED", "MODIFIED" -> {
        String key = key(object);
        if (key != null) {
          objects.put(key, object);
        }
        advance(object);
        notifyListener();
      }
      case "DELETED" -> {
        String key = key(object);
        if (key != null) {
          objects.remove(key);
        }
        advance(object);
        notifyListener();
      }
      case "BOOKMARK" -> {
        bookmarks.incrementAndGet();
        advance(object);
      }
      case "ERROR" -> {
        int code = object.path("code").asInt(500);
        throw new ApiException(code, "watch error " + code + " " + object.path("reason").asText("") + ": "
            + object.path("message").asText(""));
      }
      default -> log.debug("{}: ignoring watch event of type '{}'", name, type);
    }
  }

  private void advance(JsonNode object) {
    String v = object.path("metadata").path("resourceVersion").asText("");
    if (!v.isEmpty()) {
      resourceVersion = v;
    }
  }

  private void notifyListener() {
    try {
      listener.onObjects(view);
    } catch (RuntimeException e) {
      log.error("{}: listener failed; continuing", name, e);
    }
  }

  static @Nullable String key(JsonNode object) {
    JsonNode meta = object.path("metadata");
    String n = meta.path("name").asText("");
    if (n.isEmpty()) {
      return null;
    }
    String ns = meta.path("namespace").asText("");
    return ns.isEmpty() ? n : ns + "/" + n;
  }
}
