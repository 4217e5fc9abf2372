/**
 * Simulated vLLM servers in real time: each {@link dev.kinference.sim.server.SimulatedServer} is a real HTTP server
 * on loopback speaking vLLM's OpenAI and Anthropic APIs, {@code /tokenize}, {@code /health}, {@code /metrics} (vLLM's
 * Prometheus names) and {@code /v1/models}, plus a real ZMQ PUB socket and ROUTER replay socket publishing KV-cache
 * events byte-compatible with vLLM's. An engine model behind them decides when tokens come out, in wall-clock time.
 * {@link dev.kinference.sim.server.SimulatedFleet} starts several.
 */
@NullMarked
package dev.kinference.sim.server;

import org.jspecify.annotations.NullMarked;
