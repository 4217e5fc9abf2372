/**
 * Simulated vLLM servers in real time: each {@link dev.kinference.sim.server.SimulatedServer} is a real HTTP server
 * on loopback (Jetty, ephemeral port, a virtual thread per request) and a real ZMQ PUB socket with a ROUTER replay
 * socket (JeroMQ), with a {@link dev.kinference.sim.engine.SimEngine} behind them deciding, in wall-clock time (or
 * {@code timeScale} times faster), when each token comes out. {@link dev.kinference.sim.server.SimulatedFleet} starts
 * several. The formats follow vLLM's source, field for field:
 *
 * <h2>HTTP</h2>
 * <ul>
 *   <li>{@code POST /v1/chat/completions} and {@code /v1/completions}: ids {@code chatcmpl-}/{@code cmpl-} + 32 hex
 *       digits. Streams are {@code data: <json>\n\n} chunks dumped as vLLM does ({@code exclude_unset}): the chat
 *       stream starts with {@code {"role":"assistant","content":""}}, sent with the first token (vLLM emits nothing
 *       before the first output); one chunk per engine step (tokens that queued while the writer was busy are merged
 *       into one delta, as vLLM's output processor merges them); the last content chunk carries
 *       {@code finish_reason} and {@code stop_reason}; with {@code stream_options.include_usage} a chunk with
 *       {@code "choices":[]} and {@code usage} ({@code prompt_tokens, total_tokens, completion_tokens,
 *       prompt_tokens_details.cached_tokens}, dumped with {@code exclude_none}) precedes {@code data: [DONE]}.
 *       {@code continuous_usage_stats} adds usage to every chunk. The server runs as with
 *       {@code --enable-prompt-tokens-details} unless told otherwise. Answers are words of at most six letters, each
 *       one token of the core's {@code ApproximateTokenizer}; {@code ignore_eos} generates exactly
 *       {@code max_tokens}; otherwise the answer has the configured natural length, cut by {@code max_tokens}
 *       ({@code length}) or not ({@code stop}).</li>
 *   <li>{@code POST /v1/messages}: vLLM's Anthropic endpoint, which runs through its chat path (so ids are
 *       {@code chatcmpl-} ids). The stream is {@code event: <type>\ndata: <json>\n\n}: {@code message_start} (without
 *       {@code type}/{@code role} in the message, as vLLM's {@code exclude_unset} dump), {@code content_block_start},
 *       {@code content_block_delta}s, {@code content_block_stop}, {@code message_delta} (stop reason mapped
 *       stop→{@code end_turn}, length→{@code max_tokens}, tool_calls→{@code tool_use}; cumulative usage),
 *       {@code message_stop}. {@code POST /v1/messages/count_tokens} answers {@code {"input_tokens": n}}.</li>
 *   <li>{@code POST /tokenize} ({@code prompt} or {@code messages}, {@code model} optional): the core's
 *       {@code RequestParser} and {@code ApproximateTokenizer} on the request, {@code {count, max_model_len, tokens,
 *       token_strs}}. {@code GET /v1/models}: the base model and each LoRA adapter (with {@code parent}).
 *       {@code GET /health}: 200, or 503 once the engine is dead. {@code POST /reset_prefix_cache} (vLLM's dev
 *       endpoint). Errors are vLLM's {@code {"error":{"message","type","param","code"}}} (Anthropic's
 *       {@code {"type":"error","error":{...}}} on {@code /v1/messages}); unknown paths and methods get FastAPI's
 *       {@code {"detail": ...}}.</li>
 *   <li>{@code GET /metrics}: prometheus_client's text format 0.0.4 (labels sorted, {@code _total} counters with
 *       their {@code _created} samples in separate gauge families, Python float formatting) with vLLM V1's names:
 *       {@code vllm:num_requests_running/waiting}, {@code vllm:kv_cache_usage_perc},
 *       {@code vllm:prefix_cache_queries/hits}, {@code vllm:num_preemptions}, {@code vllm:prompt_tokens},
 *       {@code vllm:generation_tokens}, {@code vllm:request_success} by {@code finished_reason}, the TTFT,
 *       inter-token and end-to-end histograms with vLLM's buckets, {@code vllm:cache_config_info} (labels include
 *       {@code block_size} and {@code num_gpu_blocks}) and, with LoRA adapters, {@code vllm:lora_requests_info}
 *       (value = time set, every label set ever seen kept, as prometheus_client does). Labels {@code model_name} and
 *       {@code engine} (the data-parallel rank).</li>
 * </ul>
 *
 * <h2>KV events</h2>
 * Three frames per batch: topic (default {@code kv@127.0.0.1:<port>@<model>}, llm-d's convention), an 8-byte
 * big-endian sequence number from 0 per process, and the msgpack {@code KVEventBatch}, always the positional array
 * {@code [ts float64, events, data_parallel_rank]} that vLLM releases send (kinference-vllm's README says why). Events are vLLM 0.26's tagged maps ({@code BlockStored} with
 * {@code type, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, extra_keys,
 * group_idx, kv_cache_spec_kind}; {@code BlockRemoved} with {@code type, block_hashes, medium, group_idx};
 * {@code AllBlocksCleared}) or, with {@link dev.kinference.sim.server.KvEventFormat#ARRAY}, the older positional
 * arrays. Block hashes are the engine's seeded 64-bit hashes (a new random seed per start, like a vLLM process
 * without {@code PYTHONHASHSEED}), written as unsigned msgpack integers ({@code 0xcf} at or above 2^63);
 * {@code extra_keys} has one entry per block (the LoRA name on every block, {@code cache_salt} on a sequence's
 * first block, nil otherwise). The ROUTER socket answers {@code [identity, "", start seq]} with every buffered
 * batch from {@code start} as {@code ["", seq, payload]} (or {@code ["", topic, seq, payload]}), then
 * {@code ["", ff x 8, ""]}; other requests are logged and ignored.
 *
 * <h2>Test hooks</h2>
 * {@link dev.kinference.sim.server.SimulatedServer#kill()}, {@code kill(KillMode.UNREACHABLE)},
 * {@link dev.kinference.sim.server.SimulatedServer#restart()} (same ports, empty cache, counters and sequence
 * numbers from 0), {@link dev.kinference.sim.server.SimulatedServer#dropKvEvents} (a gap to repair by replay),
 * {@link dev.kinference.sim.server.SimulatedServerBuilder#instantResponse} (no engine: a proxy's own overhead).
 */
@NullMarked
package dev.kinference.sim.server;

import org.jspecify.annotations.NullMarked;
