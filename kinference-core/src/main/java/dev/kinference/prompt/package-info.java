/**
 * From request to prefix keys: a {@link dev.kinference.prompt.Tokenizer} turns a request into the token ids the
 * server would see, and {@link dev.kinference.prompt.BlockKeys} cuts them into blocks, each keyed by a 64-bit hash
 * chained from a seed of model, LoRA adapter and {@code cache_salt}. Two requests share a block key exactly when
 * vLLM could share that KV block: same seed and same tokens up to and including the block.
 */
@NullMarked
package dev.kinference.prompt;

import org.jspecify.annotations.NullMarked;
