package dev.kinference.plugin;

/**
 * What every extension point has in common: a stable name by which users select it, and a position in the
 * deterministic discovery order described in {@link dev.kinference.plugin the package documentation}.
 */
public interface Plugin {

  /** A short, stable, lower-case name such as {@code prefix-overlap}; unique among providers of one service. */
  String name();

  /** Position in discovery order; lower comes first. Built-ins use 0; the default is 0. */
  default int order() {
    return 0;
  }
}
