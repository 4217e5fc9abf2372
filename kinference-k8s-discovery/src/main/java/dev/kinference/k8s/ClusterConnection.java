package dev.kinference.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fabric8 client and the shared informers of one source ("a generation"), kept alive by a watchdog.
 *
 * <p>Every {@code checkInterval} the watchdog looks at two things. <b>Silence</b>: an informer whose resource
 * version (advanced by every event and every bookmark, which the API server sends about once a minute) has not moved
 * for {@code idleTimeout}, or that has not listed yet, is presumed to sit on a dead connection. <b>Credentials</b>:
 * the fingerprint of the kubeconfig files and CA file ({@link ConfigFiles}) changed, as when the cluster CA is
 * rotated. Either way, and when an informer's first list failed (fabric8 does not retry that; the retry then comes
 * with the next check), a new generation (a new configuration, client and informers, so a new CA is read) is started
 * next to the current one, which stays in force (its endpoints are not withdrawn) until the new one has listed
 * everything; then the new one replaces it. A dead watch is therefore replaced within {@code idleTimeout +
 * checkInterval} (defaults 2 min + 10 s). That covers connections dropped without a word too: fabric8's WebSocket
 * watches on the JDK client did not notice a connection closed under them (nor did their pings) in our tests. A
 * quiet but healthy collection on a server that sends no bookmarks is relisted that often, which is cheap.
 *
 * <p>Each check also kills the configuration's exec credential plugin when it has run for over {@code execTimeout}
 * (fabric8 re-runs it without a limit after a 401; {@link KubernetesConfigs#killOverdueExecPlugins}).
 */
final class ClusterConnection implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ClusterConnection.class);

  /** Creates (not starts) a generation's informers on {@code client}; each calls {@code changed} on any event. */
  interface Setup {
    List<SharedIndexInformer<?>> informers(KubernetesClient client, Runnable changed);
  }

  /** Timing of the watchdog. */
  record Options(Duration idleTimeout, Duration checkInterval, Duration execTimeout) {
    static final Options DEFAULT = new Options(Duration.ofMinutes(2), Duration.ofSeconds(10),
        KubernetesConfigs.DEFAULT_TIMEOUT);

    Options {
      for (Duration d : new Duration[] {idleTimeout, checkInterval, execTimeout}) {
        if (d.isNegative() || d.isZero()) {
          throw new IllegalArgumentException("timeouts must be positive: " + d);
        }
      }
    }
  }

  /** One client and its informers; the stores are read by the owner when it is current. */
  static final class Generation {
    final int number;
    final Config config;
    final KubernetesClient client;
    final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    final List<java.nio.file.Path> files;
    final String fingerprint;
    private final long[] lastProgress;
    private final @Nullable String[] lastVersion;

    Generation(int number, Config config, KubernetesClient client, List<java.nio.file.Path> files) {
      this.number = number;
      this.config = config;
      this.client = client;
      this.files = files;
      this.fingerprint = ConfigFiles.fingerprint(files);
      this.lastProgress = new long[16];
      this.lastVersion = new String[16];
    }

    private final java.util.Set<SharedIndexInformer<?>> listed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** An informer whose first list failed (fabric8 does not retry that); the watchdog then starts over. */
    private volatile @Nullable String failed;

    /** Whether every informer has completed its first list (its start), so that its store is complete. */
    boolean synced() {
      return listed.size() == informers.size();
    }

    /** The index of an informer silent for longer than {@code idleNanos}, or -1. */
    int silent(long now, long idleNanos) {
      for (int k = 0; k < informers.size(); k++) {
        SharedIndexInformer<?> i = informers.get(k);
        String v = listed.contains(i) ? i.lastSyncResourceVersion() : null;
        if (v != null && !v.equals(lastVersion[k])) {
          lastVersion[k] = v;
          lastProgress[k] = now;
        } else if (now - lastProgress[k] > idleNanos) {
          return k;
        }
      }
      return -1;
    }

    void close() {
      for (SharedIndexInformer<?> i : informers) {
        try {
          i.stop();
        } catch (RuntimeException e) {
          log.debug("Stopping an informer failed", e);
        }
      }
      client.close();
    }
  }

  private final String name;
  private final Supplier<Config> configs;
  private final Options options;
  private final Setup setup;
  private final Consumer<Generation> onChange;
  private volatile Runnable onCheck = () -> {};
  private final Object lock = new Object();
  private final ScheduledExecutorService watchdog;
  // guarded by lock
  private @Nullable Generation current;
  private @Nullable Generation pending;
  private int generations;
  private boolean closed;

  ClusterConnection(String name, Supplier<Config> configs, Options options, Setup setup,
      Consumer<Generation> onChange) {
    this.name = name;
    this.configs = configs;
    this.options = options;
    this.setup = setup;
    this.onChange = onChange;
    this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kinference-k8s-watchdog-" + name);
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts the first generation (the configuration is loaded here; its errors are thrown) and the watchdog. */
  void start() {
    Generation g = newGeneration();
    synchronized (lock) {
      if (closed) {
        g.close();
        return;
      }
      current = g;
    }
    startInformers(g);
    long period = options.checkInterval().toNanos();
    java.util.concurrent.Future<?> unused =
        watchdog.scheduleWithFixedDelay(this::check, period, period, TimeUnit.NANOSECONDS);
  }

  /** Also run at every check of the watchdog (on its thread). */
  void onCheck(Runnable hook) {
    this.onCheck = Objects.requireNonNull(hook);
  }

  /** How many generations have been started (1 until a watch is found dead or the CA changes). */
  int generations() {
    synchronized (lock) {
      return generations;
    }
  }

  private Generation newGeneration() {
    Config config = configs.get();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory()).build();
    Generation g;
    synchronized (lock) {
      g = new Generation(++generations, config, client, ConfigFiles.files(config));
    }
    long now = System.nanoTime();
    Generation gen = g;
    try {
      gen.informers.addAll(setup.informers(client, () -> changed(gen)));
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    java.util.Arrays.fill(gen.lastProgress, now);
    return gen;
  }

  private void changed(Generation g) {
    Generation old = null;
    synchronized (lock) {
      if (closed) {
        return;
      }
      if (g == pending && g.synced()) {
        old = current;
        current = g;
        pending = null;
        log.info("{}: generation {} has listed everything and replaces generation {}", name, g.number,
            old == null ? 0 : old.number);
      }
      if (g != current || !g.synced()) {
        return;
      }
      try {
        onChange.accept(g);
      } catch (RuntimeException e) {
        log.error("{}: handling a change failed", name, e);
      }
    }
    if (old != null) {
      old.close();
    }
  }

  private void check() {
    try {
      String reason = null;
      synchronized (lock) {
        Generation c = current;
        if (closed || c == null) {
          return;
        }
        long now = System.nanoTime();
        long idle = options.idleTimeout().toNanos();
        Generation p = pending;
        KubernetesConfigs.killOverdueExecPlugins(c.config, options.execTimeout());
        if (p != null) {
          String failed = p.failed;
          if (failed == null && p.silent(now, idle) < 0) {
            return; // still listing
          }
          pending = null;
          watchdog.execute(p::close);
          reason = failed != null ? "generation " + p.number + ": " + failed
              : "generation " + p.number + " did not list within " + options.idleTimeout();
        }
        if (reason == null && c.failed != null) {
          reason = c.failed;
        } else if (reason == null) {
          String fp = ConfigFiles.fingerprint(c.files);
          int silent = c.silent(now, idle);
          if (!fp.equals(c.fingerprint)) {
            reason = "the kubeconfig or CA file changed";
          } else if (silent >= 0) {
            reason = "informer " + c.informers.get(silent).getApiTypeClass().getSimpleName()
                + " has heard nothing for " + options.idleTimeout() + " (a dead watch?)";
          }
        }
      }
      onCheck.run();
      if (reason != null) {
        replace(reason);
      }
    } catch (RuntimeException e) {
      log.warn("{}: the watchdog failed: {}", name, e.toString());
    }
  }

  private void replace(String reason) {
    log.warn("{}: {}; starting a new client and informers (the current ones stay in force until they have "
        + "listed)", name, reason);
    Generation g = newGeneration();
    Generation old = null;
    synchronized (lock) {
      if (closed) {
        g.close();
        return;
      }
      Generation c = current;
      if (c == null || !c.synced()) {
        old = c; // nothing delivered from it: replace at once
        current = g;
      } else {
        pending = g;
      }
    }
    if (old != null) {
      old.close();
    }
    startInformers(g);
  }

  private void startInformers(Generation g) {
    for (SharedIndexInformer<?> i : g.informers) {
      // Once listed, look again: the list's own events may have been handled before the informer counted as synced.
      i.start().whenComplete((ok, failure) -> {
        if (failure != null) {
          log.warn("{}: {} could not list: {}", name, i.getApiTypeClass().getSimpleName(), failure.toString());
          g.failed = i.getApiTypeClass().getSimpleName() + " could not list (" + failure + ")";
        } else {
          g.listed.add(i);
          changed(g);
        }
      });
    }
  }

  /** Adapts a change callback to fabric8's handler. */
  static <T> ResourceEventHandler<T> handler(Runnable changed) {
    Objects.requireNonNull(changed);
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        changed.run();
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        changed.run();
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        changed.run();
      }
    };
  }

  @Override
  public void close() {
    Generation c;
    Generation p;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      c = current;
      p = pending;
      current = null;
      pending = null;
    }
    watchdog.shutdownNow();
    if (c != null) {
      c.close();
    }
    if (p != null) {
      p.close();
    }
  }
}
