/**
 * The offline checker behind {@code kinference check}: {@link dev.kinference.policy.check.PolicyChecker} loads
 * files with the runtime's validation and prints every problem as {@code file:line:column: severity: message};
 * {@link dev.kinference.policy.check.Explainer} shows which rules a request fires and where it would go.
 */
@NullMarked
package dev.kinference.policy.check;

import org.jspecify.annotations.NullMarked;
