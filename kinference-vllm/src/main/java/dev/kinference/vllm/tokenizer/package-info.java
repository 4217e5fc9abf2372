/**
 * Tokenizers that reproduce a vLLM server's token ids, so that the router's block keys match the server's cache:
 * {@link dev.kinference.vllm.tokenizer.RemoteTokenizer} asks the server ({@code /tokenize} or the render
 * endpoints); {@link dev.kinference.vllm.tokenizer.HuggingFaceTokenizer} renders the model's chat template and
 * encodes in-process.
 */
@NullMarked
package dev.kinference.vllm.tokenizer;

import org.jspecify.annotations.NullMarked;
