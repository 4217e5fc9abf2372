/**
 * One simulated vLLM V1 engine: continuous batching under a per-step token budget, chunked prefill with decodes
 * first, a KV block pool with automatic prefix caching and LRU eviction, preemption by recompute, and step times
 * from a roofline model of the GPU and the model. Its observable state is what a real server exposes: vLLM's
 * metrics ({@link dev.kinference.sim.engine.EngineMetrics}) and KV-cache events
 * ({@link dev.kinference.sim.engine.EngineStepEvents}).
 *
 * <p>Entry point: {@link dev.kinference.sim.engine.SimEngine}.
 */
@NullMarked
package dev.kinference.sim.engine;

import org.jspecify.annotations.NullMarked;
