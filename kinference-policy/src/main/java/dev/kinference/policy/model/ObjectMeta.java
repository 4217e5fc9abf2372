package dev.kinference.policy.model;

import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Kubernetes-style metadata. Only {@code name} matters to Kinference; labels and annotations are kept for tools.
 *
 * @param name unique among resources of one kind: lower-case letters, digits, {@code -} and {@code .}, at most
 *     253 characters, starting and ending with a letter or digit
 * @param namespace informational; a configuration is one namespace
 */
public record ObjectMeta(String name, @Nullable String namespace, Map<String, String> labels,
    Map<String, String> annotations) {

  public ObjectMeta {
    Objects.requireNonNull(name, "name");
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
  }

  /** Metadata with only a name. */
  public static ObjectMeta named(String name) {
    return new ObjectMeta(name, null, Map.of(), Map.of());
  }
}
