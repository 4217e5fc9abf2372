/**
 * vLLM's wire formats written as vLLM writes them, for test publishers, tools and benchmarks:
 * {@link dev.kinference.testkit.vllm.KvEventEncoder} encodes KV-event batches in msgpack. Kept out of the router's
 * jars: a router only reads these formats.
 */
@NullMarked
package dev.kinference.testkit.vllm;

import org.jspecify.annotations.NullMarked;
