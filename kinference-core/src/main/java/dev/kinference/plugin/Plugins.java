package dev.kinference.plugin;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Loads plugins with {@link ServiceLoader} in the deterministic order documented in the package. */
public final class Plugins {

  private static final Logger log = LoggerFactory.getLogger(Plugins.class);

  /** Provider order: {@code order()}, then name, then class name. */
  public static final Comparator<Plugin> ORDER = Comparator.comparingInt(Plugin::order)
      .thenComparing(Plugin::name)
      .thenComparing(p -> p.getClass().getName());

  private Plugins() {}

  /** Loads the providers of {@code service} visible to this library's class loader (and module layer). */
  public static <T extends Plugin> PluginSet<T> load(Class<T> service) {
    return load(service, ServiceLoader.load(service, Plugins.class.getClassLoader()));
  }

  /** Loads the providers of {@code service} visible to {@code loader}. */
  public static <T extends Plugin> PluginSet<T> load(Class<T> service, ClassLoader loader) {
    return load(service, ServiceLoader.load(service, loader));
  }

  /**
   * Instantiates every provider of a prepared loader, reporting and skipping the broken ones.
   *
   * <p>A {@link ServiceConfigurationError} (missing class, no public no-argument constructor, a constructor that
   * throws) or a provider whose {@code name()} throws or is blank is logged at WARN and listed in
   * {@link PluginSet#failures()}.
   */
  public static <T extends Plugin> PluginSet<T> load(Class<T> service, ServiceLoader<T> loader) {
    List<T> found = new ArrayList<>();
    List<PluginFailure> failures = new ArrayList<>();
    Iterator<T> it = loader.iterator();
    // ServiceLoader's iterator keeps going after an error, so each broken provider costs only itself.
    for (int guard = 0; guard < 10_000; guard++) {
      T provider;
      try {
        if (!it.hasNext()) {
          break;
        }
        provider = it.next();
      } catch (ServiceConfigurationError | LinkageError e) {
        fail(failures, service, "?", describe(e));
        continue;
      }
      String name;
      try {
        name = provider.name();
        provider.order();
      } catch (RuntimeException e) {
        fail(failures, service, provider.getClass().getName(), "name() or order() threw " + describe(e));
        continue;
      }
      if (name == null || name.isBlank()) {
        fail(failures, service, provider.getClass().getName(), "name() is blank");
        continue;
      }
      found.add(provider);
    }
    found.sort(ORDER);
    List<T> unique = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (T p : found) {
      if (names.add(p.name())) {
        unique.add(p);
      } else {
        fail(failures, service, p.getClass().getName(),
            "shadowed: an earlier provider is also named '" + p.name() + "'");
      }
    }
    return new PluginSet<>(service, unique, failures);
  }

  private static void fail(List<PluginFailure> failures, Class<?> service, String provider, String reason) {
    log.warn("Skipping {} provider {}: {}", service.getSimpleName(), provider, reason);
    failures.add(new PluginFailure(service, provider, reason));
  }

  private static String describe(Throwable e) {
    StringBuilder sb = new StringBuilder(e.toString());
    // bounded: a cause chain can be cyclic
    Throwable cause = e.getCause();
    for (int depth = 0; cause != null && depth < 8; depth++, cause = cause.getCause()) {
      sb.append(" <- ").append(cause);
    }
    return sb.toString();
  }
}
