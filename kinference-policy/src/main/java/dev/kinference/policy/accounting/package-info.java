/**
 * Per tenant and model usage: requests, errors, refusals, input, cached input and output tokens, and cost. {@link
 * dev.kinference.policy.accounting.Accounting} records it lock-free; {@link
 * dev.kinference.policy.accounting.UsageSnapshot} is a consistent-enough, queryable copy, also rendered in the
 * Prometheus text format.
 */
@NullMarked
package dev.kinference.policy.accounting;

import org.jspecify.annotations.NullMarked;
