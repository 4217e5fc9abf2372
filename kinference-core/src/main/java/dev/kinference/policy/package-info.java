/**
 * The policy extension point: a {@link dev.kinference.policy.PolicyEngine} sees each request before the router
 * scores endpoints and returns a {@link dev.kinference.policy.PolicyVerdict}: reject it, or let it proceed,
 * possibly rewritten, restricted to some endpoints, and with fallbacks. The YAML policy engine lives in
 * {@code kinference-policy}.
 */
@NullMarked
package dev.kinference.policy;

import org.jspecify.annotations.NullMarked;
