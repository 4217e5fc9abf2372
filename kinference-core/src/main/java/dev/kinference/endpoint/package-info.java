/**
 * The fleet: {@link dev.kinference.endpoint.Endpoint}s (where a server is and what it serves), where they come from
 * ({@link dev.kinference.endpoint.EndpointSource}), and what the router knows of each
 * ({@link dev.kinference.endpoint.EndpointState}): the last metrics snapshot plus its own live accounting of what
 * it has sent since, so that a burst between two scrapes does not pile onto one server.
 */
@NullMarked
package dev.kinference.endpoint;

import org.jspecify.annotations.NullMarked;
