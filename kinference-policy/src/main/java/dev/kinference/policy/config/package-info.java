/**
 * Loading and validating policy configurations: {@link dev.kinference.policy.config.PolicyLoader} reads YAML files
 * (or trees parsed by someone else, such as Kubernetes custom resources) into the resource model, reports every
 * {@link dev.kinference.policy.config.Problem} with its file, line and column, and builds an immutable {@link
 * dev.kinference.policy.config.PolicyConfig} when there is no error. {@link
 * dev.kinference.policy.config.PolicyWatcher} reloads a directory when it changes and keeps the last good
 * configuration when a reload fails. The offline checker and the runtime use this same validation.
 */
@NullMarked
package dev.kinference.policy.config;

import org.jspecify.annotations.NullMarked;
