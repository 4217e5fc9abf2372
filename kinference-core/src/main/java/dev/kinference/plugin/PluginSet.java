package dev.kinference.plugin;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The providers of one service in discovery order, and the ones that were skipped. Immutable and thread-safe.
 *
 * @param service the service interface
 * @param providers the usable providers, ordered by {@code order()}, name, then class name; names are unique
 * @param failures providers that failed to load or were shadowed by an earlier provider of the same name
 */
public record PluginSet<T extends Plugin>(Class<T> service, List<T> providers, List<PluginFailure> failures) {

  public PluginSet {
    providers = List.copyOf(providers);
    failures = List.copyOf(failures);
  }

  /** The provider with this name. */
  public Optional<T> find(String name) {
    for (T p : providers) {
      if (p.name().equals(name)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /**
   * The provider with this name.
   *
   * @throws IllegalArgumentException naming the known providers when there is none
   */
  public T require(String name) {
    return find(name).orElseThrow(() -> new IllegalArgumentException(
        "no " + service.getSimpleName() + " named '" + name + "'; known: " + names()));
  }

  /** The names of the usable providers, in order. */
  public List<String> names() {
    return providers.stream().map(Plugin::name).collect(Collectors.toUnmodifiableList());
  }
}
