/**
 * Benchmarks of kinference-vllm: KV events decoded and applied per second, and the time to read a realistic vLLM
 * {@code /metrics} page.
 */
@NullMarked
package dev.kinference.jmh.vllm;

import org.jspecify.annotations.NullMarked;
