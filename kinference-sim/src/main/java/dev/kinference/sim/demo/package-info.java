/**
 * {@code kinference demo}: three real-time simulated vLLM servers, the core {@link dev.kinference.routing.Router}
 * embedded as a library user embeds it, and a shared-prefix workload driven through it and through random routing,
 * side by side. Entry point: {@link dev.kinference.sim.demo.Demo}.
 */
@NullMarked
package dev.kinference.sim.demo;

import org.jspecify.annotations.NullMarked;
