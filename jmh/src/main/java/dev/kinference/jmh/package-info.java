/**
 * JMH benchmarks of the routing hot path, each in the shape of an anchor project's own benchmark (NVIDIA Dynamo's
 * radix-tree and indexer microbenchmarks, SGLang's tree benchmark, a Mooncake-trace replay), plus the full
 * {@code Router.route()} decision, event ingest and memory per index entry. Run them with {@code jmh/run.sh};
 * {@code docs/PERFORMANCE.md} holds the figures.
 */
@NullMarked
package dev.kinference.jmh;

import org.jspecify.annotations.NullMarked;
