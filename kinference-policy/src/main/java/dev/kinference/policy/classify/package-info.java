/**
 * Prompt classifiers used by policy rules: a {@link dev.kinference.policy.classify.PersonalDataDetector} and a
 * {@link dev.kinference.policy.classify.ComplexityClassifier}. Both are plugins found with {@link
 * java.util.ServiceLoader}; the built-ins are named {@code builtin} and are replaced by a provider with a lower
 * {@code order()}, or selected by name on {@link dev.kinference.policy.engine.YamlPolicyEngine.Builder}.
 */
@NullMarked
package dev.kinference.policy.classify;

import org.jspecify.annotations.NullMarked;
