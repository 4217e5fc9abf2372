package dev.kinference.policy.config;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A configuration loaded from files and directories and reloaded when they change. A reload that fails validation
 * keeps the previous configuration in force, logs every problem at WARN, and is reported to listeners and by
 * {@link #lastFailure()}; the next successful reload clears it.
 *
 * <p>Changes are noticed through a {@link WatchService} on every watched directory (and a file's parent), and, as
 * a safety net for file systems that do not report events, by comparing the files' sizes and modification times
 * every poll interval. Bursts of events are coalesced over a short debounce delay.
 *
 * <p>Thread-safe: {@link #get()} is a volatile read, reloads are serialised. One daemon thread watches; {@link
 * #close()} stops it.
 */
public final class PolicyWatcher implements Supplier<PolicyConfig>, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PolicyWatcher.class);

  /**
   * The outcome of one reload.
   *
   * @param applied whether the new configuration is now in force
   * @param result what loading found
   * @param at when
   */
  public record Reload(boolean applied, LoadResult result, Instant at) {}

  private final List<Path> paths;
  private final Duration debounce;
  private final Duration pollInterval;
  private final List<Consumer<Reload>> listeners = new CopyOnWriteArrayList<>();
  private volatile @Nullable Preparer preparer;
  private final Object reloadLock = new Object();
  private volatile PolicyConfig current;
  private volatile @Nullable Reload lastFailure;
  private volatile Instant loadedAt;
  private volatile String fingerprint;
  private final @Nullable WatchService watchService;
  private final Thread thread;
  private volatile boolean closed;

  private PolicyWatcher(List<Path> paths, Duration debounce, Duration pollInterval, PolicyConfig initial)
      throws IOException {
    this.paths = List.copyOf(paths);
    this.debounce = debounce;
    this.pollInterval = pollInterval;
    this.current = initial;
    this.loadedAt = Instant.now();
    this.fingerprint = fingerprint();
    WatchService ws;
    try {
      ws = FileSystems.getDefault().newWatchService();
      for (Path p : watchedDirectories()) {
        p.register(ws, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE,
            StandardWatchEventKinds.ENTRY_MODIFY);
      }
    } catch (IOException | UnsupportedOperationException e) {
      log.warn("Cannot watch {} for changes ({}); polling every {}", paths, e.toString(), pollInterval);
      ws = null;
    }
    this.watchService = ws;
    this.thread = Thread.ofPlatform().daemon().name("kinference-policy-watcher").unstarted(this::watch);
  }

  /**
   * Loads the configuration and starts watching, with a 200 ms debounce and a 5 s poll.
   *
   * @throws InvalidConfigException if the initial configuration has errors (there is nothing to keep)
   * @throws IOException if the watch cannot be set up
   */
  public static PolicyWatcher start(List<Path> paths) throws IOException {
    return start(paths, Duration.ofMillis(200), Duration.ofSeconds(5));
  }

  /** Loads the configuration and starts watching with the given debounce delay and poll interval. */
  public static PolicyWatcher start(List<Path> paths, Duration debounce, Duration pollInterval) throws IOException {
    Objects.requireNonNull(debounce, "debounce");
    Objects.requireNonNull(pollInterval, "pollInterval");
    if (debounce.isNegative() || pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("debounce must not be negative and pollInterval must be positive");
    }
    LoadResult first = PolicyLoader.load(paths);
    PolicyConfig config = first.orThrow();
    first.warnings().forEach(p -> log.warn("{}", p));
    PolicyWatcher w = new PolicyWatcher(paths, debounce, pollInterval, config);
    w.thread.start();
    log.info("Policy loaded from {}: {}", paths, config);
    return w;
  }

  /** The configuration in force. */
  @Override
  public PolicyConfig get() {
    return current;
  }

  /** When the configuration in force was loaded. */
  public Instant loadedAt() {
    return loadedAt;
  }

  /** The last reload that failed since the last one that succeeded, or null. */
  public @Nullable Reload lastFailure() {
    return lastFailure;
  }

  /**
   * Builds what a new configuration needs (providers, fleet members) before it is put in force, so that a reload is
   * all or nothing: when {@link #prepare} throws, the new configuration is refused as a whole, the previous one
   * stays in force, and the failure is logged once; otherwise the configuration is put in force and the returned
   * action runs (it should not fail: everything that can is done in {@link #prepare}).
   */
  @FunctionalInterface
  public interface Preparer {
    Runnable prepare(PolicyConfig next);
  }

  /** Sets the {@link Preparer} run before each reloaded configuration is applied (one; the last set wins). */
  public void prepareWith(Preparer p) {
    this.preparer = Objects.requireNonNull(p, "preparer");
  }

  /** Calls {@code listener} after every reload, applied or not, on the watcher's thread (or the caller's). */
  public void onReload(Consumer<Reload> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Reloads now, whether or not anything changed. */
  public Reload reloadNow() {
    synchronized (reloadLock) {
      fingerprint = fingerprint();
      LoadResult r = PolicyLoader.load(paths);
      PolicyConfig next = r.config();
      Reload outcome;
      Runnable commit = null;
      RuntimeException refused = null;
      Preparer prep = preparer;
      if (next != null && prep != null) {
        try {
          commit = prep.prepare(next);
        } catch (RuntimeException e) {
          refused = e;
        }
      }
      if (next != null && refused != null) {
        List<Problem> problems = new ArrayList<>(r.problems());
        problems.add(new Problem(Problem.Severity.ERROR, String.join(", ", r.sources()), 0, 0, "",
            "the gateway cannot use this configuration: " + refused));
        outcome = new Reload(false, new LoadResult(null, problems, r.sources()), Instant.now());
        lastFailure = outcome;
        log.warn("Policy reload from {} refused, the gateway cannot use it ({}); keeping the whole configuration "
            + "loaded at {}", paths, refused.toString(), loadedAt);
      } else if (next != null) {
        current = next;
        loadedAt = Instant.now();
        lastFailure = null;
        outcome = new Reload(true, r, loadedAt);
        r.warnings().forEach(p -> log.warn("{}", p));
        log.info("Policy reloaded from {}: {}", paths, next);
        if (commit != null) {
          try {
            commit.run();
          } catch (RuntimeException e) {
            log.warn("Applying the reloaded policy failed", e);
          }
        }
      } else {
        outcome = new Reload(false, r, Instant.now());
        lastFailure = outcome;
        log.warn("Policy reload from {} failed with {} error(s); keeping the configuration loaded at {}:\n{}",
            paths, r.errors().size(), loadedAt, r.report().strip());
      }
      for (Consumer<Reload> l : listeners) {
        try {
          l.accept(outcome);
        } catch (RuntimeException e) {
          log.warn("Policy reload listener failed", e);
        }
      }
      return outcome;
    }
  }

  private void watch() {
    long pollNanos = pollInterval.toNanos();
    while (!closed) {
      try {
        boolean changed = false;
        if (watchService != null) {
          WatchKey key = watchService.poll(pollNanos, TimeUnit.NANOSECONDS);
          if (key != null) {
            changed = true;
            key.pollEvents();
            key.reset();
            // coalesce a burst (an editor's save, a ConfigMap's symlink swap)
            Thread.sleep(Math.max(1, debounce.toMillis()));
            WatchKey more;
            while ((more = watchService.poll()) != null) {
              more.pollEvents();
              more.reset();
            }
          }
        } else {
          Thread.sleep(Math.max(1, pollInterval.toMillis()));
        }
        if (closed) {
          return;
        }
        if (changed || !fingerprint().equals(fingerprint)) {
          reloadNow();
        }
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        log.warn("Policy watcher error; continuing", e);
      }
    }
  }

  private List<Path> watchedDirectories() throws IOException {
    List<Path> dirs = new ArrayList<>();
    for (Path p : paths) {
      if (Files.isDirectory(p)) {
        dirs.addAll(PolicyLoader.tree(p, null, true));
      } else {
        Path parent = p.toAbsolutePath().getParent();
        if (parent != null && !dirs.contains(parent)) {
          dirs.add(parent);
        }
      }
    }
    return dirs;
  }

  /** Sizes and modification times of every file in the watched paths. */
  private String fingerprint() {
    StringBuilder sb = new StringBuilder();
    for (Path p : paths) {
      try (Stream<Path> walk = Files.isDirectory(p) ? PolicyLoader.tree(p, null, false).stream() : Stream.of(p)) {
        walk.sorted().forEach(f -> {
          try {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
            sb.append(f).append(':').append(a.size()).append(':').append(a.lastModifiedTime().toMillis())
                .append(':').append(a.fileKey()).append('\n');
          } catch (IOException e) {
            sb.append(f).append(":gone\n");
          }
        });
      } catch (java.io.UncheckedIOException e) {
        sb.append(p).append(":unreadable\n");
      }
    }
    return sb.toString();
  }

  /** Stops watching; the configuration in force stays readable. */
  @Override
  public void close() {
    closed = true;
    if (watchService != null) {
      try {
        watchService.close();
      } catch (IOException e) {
        log.debug("closing the watch service", e);
      }
    }
    thread.interrupt();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
