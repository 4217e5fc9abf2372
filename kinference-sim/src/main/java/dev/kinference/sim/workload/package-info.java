/**
 * Workloads for the simulated fleet: shared prefix (as inference-perf's {@code shared_prefix}), multi-turn chats,
 * unique prompts, a mix of tenants, and replay of Mooncake-format traces. Prompts are chat requests rendered and
 * tokenized by the core's {@code ApproximateTokenizer}, as the simulated servers tokenize them.
 */
@NullMarked
package dev.kinference.sim.workload;

import org.jspecify.annotations.NullMarked;
