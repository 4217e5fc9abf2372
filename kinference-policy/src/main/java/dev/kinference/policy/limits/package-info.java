/**
 * Rate limits and budgets as counters in a {@link dev.kinference.policy.limits.RateLimitStore}: a request reserves
 * its estimated demand on every limit that applies before it starts (all or nothing), and settles each against
 * its real usage when it ends. {@link dev.kinference.policy.limits.InMemoryRateLimitStore} serves one process; a
 * shared store (several gateway replicas) implements the same interface.
 */
@NullMarked
package dev.kinference.policy.limits;

import org.jspecify.annotations.NullMarked;
