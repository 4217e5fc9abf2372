/**
 * The routing benchmark: comparison routers implemented from their projects' published descriptions, scenarios
 * (the Kinference and llm-d experiments, trace replay), sweeps, results with HdrHistogram distributions and
 * goodput, and reports (table, JSON, CSV, HTML with charts).
 *
 * <p>Entry point: {@link dev.kinference.sim.bench.Benchmark}.
 */
@NullMarked
package dev.kinference.sim.bench;

import org.jspecify.annotations.NullMarked;
