/**
 * The five resource kinds of a Kinference policy configuration, as immutable Java records: {@link
 * dev.kinference.policy.model.InferencePool}, {@link dev.kinference.policy.model.ModelAlias}, {@link
 * dev.kinference.policy.model.ExternalProvider}, {@link dev.kinference.policy.model.Tenant} and {@link
 * dev.kinference.policy.model.InferencePolicy}.
 *
 * <p>Each resource is Kubernetes-shaped ({@code apiVersion: kinference.dev/v1alpha1}, {@code kind}, {@code
 * metadata}, {@code spec}); every record component is named exactly as its YAML field, optional fields are
 * {@link org.jspecify.annotations.Nullable} or an empty collection, and enums are written in YAML as their
 * {@code yamlName()}. This makes the model a stable source for generating CRD schemas. Instances are created by
 * {@link dev.kinference.policy.config.PolicyLoader}, which validates them; the records themselves only check that
 * required components are present.
 */
@NullMarked
package dev.kinference.policy.model;

import org.jspecify.annotations.NullMarked;
