package dev.kinference.k8s;

import io.fabric8.kubernetes.client.Config;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loading a fabric8 {@link Config}: in a cluster (service account), else {@code $KUBECONFIG} (several files are
 * merged, as kubectl does) or {@code ~/.kube/config}, with everything fabric8 supports there ({@code exec} plugins,
 * {@code tls-server-name}, {@code proxy-url}, client certificates, ...).
 *
 * <p>fabric8 runs a kubeconfig's {@code exec} credential plugin while loading the configuration and waits for it
 * without a limit. Loading therefore runs on its own thread under a time limit (default 60 s, as kubectl has none
 * but a hanging plugin must not hang the gateway); when it runs out, the processes started meanwhile (the plugin and
 * its children) are killed and the error says so.
 */
public final class KubernetesConfigs {

  private static final Logger log = LoggerFactory.getLogger(KubernetesConfigs.class);

  /** The default limit on loading a configuration, exec plugins included. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  private static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

  private KubernetesConfigs() {}

  /**
   * The configuration found as described in the class doc, or an {@link IllegalStateException} naming what was
   * looked for when there is neither a cluster nor a kubeconfig.
   */
  public static Config autodetect() {
    return autodetect(DEFAULT_TIMEOUT);
  }

  /** {@link #autodetect()} with another limit on running exec plugins. */
  public static Config autodetect(Duration timeout) {
    Map<String, String> env = System.getenv();
    boolean inCluster = env.get("KUBERNETES_SERVICE_HOST") != null && Files.isReadable(SERVICE_ACCOUNT);
    if (!inCluster) {
      List<Path> kubeconfigs = kubeconfigFiles(env);
      if (kubeconfigs.stream().noneMatch(Files::isRegularFile)) {
        throw new IllegalStateException("no Kubernetes API server: KUBERNETES_SERVICE_HOST unset or no token at "
            + SERVICE_ACCOUNT + ", and no kubeconfig at " + kubeconfigs);
      }
    }
    return load("the Kubernetes configuration", () -> Config.autoConfigure(null), timeout);
  }

  /**
   * A kubeconfig file (its current context), re-read each time the supplier is called: a source given this reads
   * a rotated CA (in the file or in the file it names) when it reconnects.
   */
  public static Supplier<Config> kubeconfig(Path file) {
    return kubeconfig(file, DEFAULT_TIMEOUT);
  }

  /** {@link #kubeconfig(Path)} with another limit on running exec plugins. */
  public static Supplier<Config> kubeconfig(Path file, Duration timeout) {
    return () -> load("kubeconfig " + file, () -> Config.fromKubeconfig(file.toFile()), timeout);
  }

  /** The kubeconfig files fabric8 reads: system property {@code kubeconfig}, else {@code $KUBECONFIG}, else ~. */
  static List<Path> kubeconfigFiles(Map<String, String> env) {
    String list = System.getProperty("kubeconfig", env.get("KUBECONFIG"));
    if (list == null || list.isBlank()) {
      return List.of(Path.of(System.getProperty("user.home"), ".kube", "config"));
    }
    List<Path> out = new ArrayList<>();
    for (String s : list.split(File.pathSeparator)) {
      if (!s.isBlank()) {
        out.add(Path.of(s));
      }
    }
    return out;
  }

  /**
   * Kills the processes of {@code config}'s exec credential plugin that have run for longer than {@code limit},
   * with their descendants: fabric8 runs the plugin again, without a limit, when the API server answers 401 (on its
   * HTTP thread). Such processes are recognised as children of this JVM whose command line names the plugin's
   * command. Returns how many were killed.
   */
  static int killOverdueExecPlugins(Config config, Duration limit) {
    String command = execCommand(config);
    if (command == null) {
      return 0;
    }
    String name = Path.of(command).getFileName().toString();
    java.time.Instant before = java.time.Instant.now().minus(limit);
    List<ProcessHandle> overdue = ProcessHandle.current().children()
        .filter(p -> p.info().commandLine().orElse("").contains(name))
        .filter(p -> p.info().startInstant().map(t -> t.isBefore(before)).orElse(false))
        .toList();
    for (ProcessHandle p : overdue) {
      log.error("The exec credential plugin {} (pid {}) has run for over {}; killing it", command, p.pid(), limit);
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    return overdue.size();
  }

  /** The command of the exec plugin of {@code config}'s user, or null. */
  static @Nullable String execCommand(Config config) {
    File file = config.getFileWithAuthInfo() != null ? config.getFileWithAuthInfo() : config.getFile();
    io.fabric8.kubernetes.api.model.NamedContext context = config.getCurrentContext();
    if (file == null || context == null || context.getContext() == null || !file.isFile()) {
      return null;
    }
    String user = context.getContext().getUser();
    try {
      io.fabric8.kubernetes.api.model.Config kubeconfig =
          io.fabric8.kubernetes.client.internal.KubeConfigUtils.parseConfig(file);
      for (io.fabric8.kubernetes.api.model.NamedAuthInfo a : kubeconfig.getUsers()) {
        if (a.getName().equals(user) && a.getUser() != null && a.getUser().getExec() != null) {
          String command = a.getUser().getExec().getCommand();
          return command == null || command.isBlank() ? null : command;
        }
      }
    } catch (RuntimeException e) {
      log.debug("Cannot read {} for its exec plugin: {}", file, e.toString());
    }
    return null;
  }

  /**
   * Runs {@code loader} on a thread of its own; after {@code timeout} kills the processes it started (an exec
   * plugin and its descendants) and throws.
   */
  static Config load(String what, Supplier<Config> loader, Duration timeout) {
    Set<Long> before = ProcessHandle.current().children().map(ProcessHandle::pid).collect(Collectors.toSet());
    FutureTask<Config> task = new FutureTask<>(loader::get);
    Thread t = new Thread(task, "kinference-k8s-config");
    t.setDaemon(true);
    t.start();
    try {
      return task.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      List<ProcessHandle> started = ProcessHandle.current().children().filter(p -> !before.contains(p.pid()))
          .toList();
      for (ProcessHandle p : started) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
      task.cancel(true);
      log.error("Loading {} took over {}; killed {} process(es) it started (a hanging exec credential plugin?)",
          what, timeout, started.size());
      throw new IllegalStateException("loading " + what + " took over " + timeout + "; killed " + started.size()
          + " process(es) it started (a hanging exec credential plugin?)", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException("loading " + what + " failed", cause);
    } catch (InterruptedException e) {
      task.cancel(true);
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while loading " + what, e);
    }
  }
}
