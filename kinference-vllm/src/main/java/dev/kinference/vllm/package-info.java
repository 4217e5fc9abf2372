/**
 * Kinference for vLLM: the {@link dev.kinference.vllm.VllmLabels endpoint labels} that tell where a server's
 * metrics and KV events are; the work is in the subpackages.
 */
@NullMarked
package dev.kinference.vllm;

import org.jspecify.annotations.NullMarked;
