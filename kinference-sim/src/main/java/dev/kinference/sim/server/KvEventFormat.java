package dev.kinference.sim.server;

/**
 * How a simulated server encodes each KV-cache event inside a {@code KVEventBatch}. The batch itself is always the
 * positional array {@code [ts: float64, events: array, data_parallel_rank: int]} that vLLM releases send, 0.26
 * included (kinference-vllm's README, "Which batch envelope vLLM sends").
 */
public enum KvEventFormat {

  /**
   * vLLM 0.26 and later (vllm-project/vllm#42892): each event is a msgpack map tagged by its {@code "type"} key,
   * {@code BlockStored} carrying {@code block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium,
   * lora_name, extra_keys, group_idx, kv_cache_spec_kind}.
   */
  MAP,

  /**
   * Older vLLM (msgspec {@code array_like=True}): each event is a positional array whose first element is the tag,
   * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name]},
   * {@code ["BlockRemoved", block_hashes, medium]}, {@code ["AllBlocksCleared"]}.
   */
  ARRAY
}
