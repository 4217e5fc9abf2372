package dev.kinference.policy.model;

/**
 * One resource of a policy configuration. Immutable.
 */
public sealed interface Resource permits InferencePool, ModelAlias, ExternalProvider, Tenant, InferencePolicy {

  /** The only {@code apiVersion} this version understands. */
  String API_VERSION = "kinference.dev/v1alpha1";

  /** The kind, as written in YAML: {@code InferencePool}, {@code ModelAlias}, ... */
  String kind();

  ObjectMeta metadata();

  /** The resource's name ({@code metadata.name}). */
  default String name() {
    return metadata().name();
  }

  /** {@code Kind/name}, as used in messages and traces. */
  default String ref() {
    return kind() + "/" + metadata().name();
  }
}
