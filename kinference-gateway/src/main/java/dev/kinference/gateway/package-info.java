/**
 * The reference gateway: one OpenAI- and Anthropic-compatible HTTP endpoint in front of a fleet of vLLM servers and
 * external providers, routing every request with the core {@link dev.kinference.routing.Router}. See
 * {@link dev.kinference.gateway.Gateway} for what it serves and how a request is handled, in order.
 */
@NullMarked
package dev.kinference.gateway;

import org.jspecify.annotations.NullMarked;
