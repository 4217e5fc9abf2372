package dev.kinference.k8s;

import io.fabric8.kubernetes.client.Config;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * How every watcher of this module reaches the API server and notices a dead connection: the settings its
 * builders share ({@link KubernetesEndpointSource.Builder}, {@link PolicyResourceSource.Builder}, {@link
 * InferencePoolSource.Builder}). Each setter validates its argument; not thread-safe, as builders are.
 *
 * @param <B> the builder, returned by the setters
 */
public abstract class ClusterSettings<B extends ClusterSettings<B>> {

  @Nullable Supplier<Config> configs;
  Duration configTimeout = KubernetesConfigs.DEFAULT_TIMEOUT;
  Duration idleTimeout = ClusterConnection.Options.DEFAULT.idleTimeout();
  Duration checkInterval = ClusterConnection.Options.DEFAULT.checkInterval();

  ClusterSettings() {}

  abstract B self();

  /**
   * How to reach the API server: a fixed fabric8 configuration (a CA file it names is still re-read when the file
   * changes). Default: {@link KubernetesConfigs#autodetect()} when started, and again on reconnecting.
   */
  public B config(Config config) {
    Objects.requireNonNull(config, "config");
    this.configs = () -> config;
    return self();
  }

  /** How to reach the API server, asked again for each new client (e.g. {@link KubernetesConfigs#kubeconfig}). */
  public B configs(Supplier<Config> configs) {
    this.configs = Objects.requireNonNull(configs, "configs");
    return self();
  }

  /** The limit on loading the autodetected configuration, exec credential plugins included. Default 60 s. */
  public B configTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive: " + timeout);
    }
    this.configTimeout = timeout;
    return self();
  }

  /**
   * A watch that has heard nothing (no event, no bookmark) for this long is presumed dead and replaced by a new
   * client and informers. Default 2 minutes.
   */
  public B idleTimeout(Duration timeout) {
    this.idleTimeout = Objects.requireNonNull(timeout, "timeout");
    return self();
  }

  /** How often the watchdog looks (silence, changed CA). Default 10 s. */
  B checkInterval(Duration interval) {
    this.checkInterval = Objects.requireNonNull(interval, "interval");
    return self();
  }

  /** The configuration to connect with: the one given, else the autodetected one within the config timeout. */
  Supplier<Config> configSupplier() {
    Supplier<Config> c = configs;
    if (c != null) {
      return c;
    }
    Duration timeout = configTimeout;
    return () -> KubernetesConfigs.autodetect(timeout);
  }

  /** The watchdog's settings (validated here). */
  ClusterConnection.Options options() {
    return new ClusterConnection.Options(idleTimeout, checkInterval, configTimeout);
  }

  /** These settings into {@code other}, for a builder's immutable copy. */
  void copySettingsTo(ClusterSettings<?> other) {
    other.configs = configs;
    other.configTimeout = configTimeout;
    other.idleTimeout = idleTimeout;
    other.checkInterval = checkInterval;
  }
}
