package dev.kinference.sim.server;

import dev.kinference.cache.KvEvent;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Encodes batches of {@link KvEvent}s as vLLM's {@code KVEventBatch} msgpack payload. Block hashes are written as
 * unsigned 64-bit integers (so values at or above 2^63 use {@code 0xcf}), as vLLM's default integer block hashes.
 * Each event carries its KV-cache group as vLLM's {@code kv_events.py} does: {@code group_idx}, and on
 * {@code BlockStored} {@code kv_cache_spec_kind} ({@code full_attention} for the full-attention group,
 * {@code sliding_window} with {@code kv_cache_spec_sliding_window} for a window group, {@code mamba} for a Mamba
 * group). The array form writes these trailing fields only for a model with several groups and an event not of group
 * 0 full attention, so a single-group model's events stay as older vLLM sends them.
 *
 * <p>Immutable and thread-safe.
 */
final class KvEventBatchWriter {

  static final String MEDIUM_GPU = "GPU";
  static final String FULL_ATTENTION = "full_attention";
  static final String SLIDING_WINDOW = "sliding_window";
  static final String MAMBA = "mamba";

  private final KvEventFormat format;
  private final int dataParallelRank;
  private final Map<String, Integer> loraIds;

  /**
   * @param loraIds each served LoRA adapter's integer id ({@code lora_id} in events), by name
   */
  KvEventBatchWriter(KvEventFormat format, int dataParallelRank, Map<String, Integer> loraIds) {
    this.format = format;
    this.dataParallelRank = dataParallelRank;
    this.loraIds = Map.copyOf(loraIds);
  }

  KvEventFormat format() {
    return format;
  }

  /** The payload frame of one batch: {@code [ts, [events...], data_parallel_rank]}. */
  byte[] encodeBatch(double timestampSeconds, List<KvEvent> events) {
    return encodeBatch(timestampSeconds, events, java.util.Collections.nCopies(events.size(), 0), 0, 0);
  }

  /**
   * The payload frame of one batch whose event {@code i} belongs to KV-cache group {@code groups.get(i)}: group
   * {@code fullAttentionGroup} full attention; any other a sliding window of {@code slidingWindow} tokens, or a Mamba
   * group if {@code slidingWindow} is 0.
   */
  byte[] encodeBatch(double timestampSeconds, List<KvEvent> events, List<Integer> groups, int slidingWindow,
      int fullAttentionGroup) {
    if (groups.size() != events.size()) {
      throw new IllegalArgumentException(groups.size() + " groups for " + events.size() + " events");
    }
    MsgpackWriter w = new MsgpackWriter(64 + 64 * events.size());
    w.arrayHeader(3).float64(timestampSeconds).arrayHeader(events.size());
    for (int i = 0; i < events.size(); i++) {
      int group = groups.get(i);
      boolean described = group != 0 || fullAttentionGroup != 0;
      String kind = group == fullAttentionGroup ? FULL_ATTENTION : slidingWindow > 0 ? SLIDING_WINDOW : MAMBA;
      switch (events.get(i)) {
        case KvEvent.BlockStored s -> stored(w, s, group, described, kind, slidingWindow);
        case KvEvent.BlockRemoved r -> removed(w, r, group, described);
        case KvEvent.AllBlocksCleared c -> cleared(w);
      }
    }
    w.integer(dataParallelRank);
    return w.toByteArray();
  }

  private void stored(MsgpackWriter w, KvEvent.BlockStored s, int group, boolean described, String kind,
      int slidingWindow) {
    boolean window = kind.equals(SLIDING_WINDOW);
    if (format == KvEventFormat.MAP) {
      w.mapHeader(window ? 12 : 11);
      w.str("type").str("BlockStored");
      w.str("block_hashes");
      hashes(w, s.blockHashes());
      w.str("parent_block_hash");
      optionalHash(w, s.parentBlockHash());
      w.str("token_ids");
      tokens(w, s.tokenIds());
      w.str("block_size").integer(s.blockSize());
      w.str("lora_id");
      loraId(w, s.loraName());
      w.str("medium").str(medium(s.medium()));
      w.str("lora_name");
      optionalString(w, s.loraName());
      w.str("extra_keys");
      extraKeys(w, s);
      w.str("group_idx").integer(group);
      w.str("kv_cache_spec_kind").str(kind);
      if (window) {
        w.str("kv_cache_spec_sliding_window").integer(slidingWindow);
      }
    } else {
      w.arrayHeader(described ? 12 : 8).str("BlockStored");
      hashes(w, s.blockHashes());
      optionalHash(w, s.parentBlockHash());
      tokens(w, s.tokenIds());
      w.integer(s.blockSize());
      loraId(w, s.loraName());
      w.str(medium(s.medium()));
      optionalString(w, s.loraName());
      if (described) {
        extraKeys(w, s);
        w.integer(group).str(kind);
        if (window) {
          w.integer(slidingWindow);
        } else {
          w.nil();
        }
      }
    }
  }

  private void removed(MsgpackWriter w, KvEvent.BlockRemoved r, int group, boolean described) {
    if (format == KvEventFormat.MAP) {
      w.mapHeader(4);
      w.str("type").str("BlockRemoved");
      w.str("block_hashes");
      hashes(w, r.blockHashes());
      w.str("medium").str(medium(r.medium()));
      w.str("group_idx").integer(group);
    } else {
      w.arrayHeader(described ? 4 : 3).str("BlockRemoved");
      hashes(w, r.blockHashes());
      w.str(medium(r.medium()));
      if (described) {
        w.integer(group);
      }
    }
  }

  private void cleared(MsgpackWriter w) {
    if (format == KvEventFormat.MAP) {
      w.mapHeader(1).str("type").str("AllBlocksCleared");
    } else {
      w.arrayHeader(1).str("AllBlocksCleared");
    }
  }

  /**
   * One entry per block, as vLLM's {@code _gen_*_extra_hash_keys}: the LoRA name on every block, the cache salt on
   * the first block only (after the LoRA name), nil for a block with neither.
   */
  private static void extraKeys(MsgpackWriter w, KvEvent.BlockStored s) {
    int blocks = s.blockHashes().length;
    String lora = s.loraName();
    String salt = s.parentBlockHash() == null ? s.cacheSalt() : null;
    w.arrayHeader(blocks);
    for (int b = 0; b < blocks; b++) {
      String blockSalt = b == 0 ? salt : null;
      int n = (lora != null ? 1 : 0) + (blockSalt != null ? 1 : 0);
      if (n == 0) {
        w.nil();
        continue;
      }
      w.arrayHeader(n);
      if (lora != null) {
        w.str(lora);
      }
      if (blockSalt != null) {
        w.str(blockSalt);
      }
    }
  }

  private void loraId(MsgpackWriter w, @Nullable String lora) {
    Integer id = lora == null ? null : loraIds.get(lora);
    if (id == null) {
      w.nil();
    } else {
      w.integer(id);
    }
  }

  private static void hashes(MsgpackWriter w, long[] hashes) {
    w.arrayHeader(hashes.length);
    for (long h : hashes) {
      w.unsigned(h);
    }
  }

  private static void optionalHash(MsgpackWriter w, @Nullable Long hash) {
    if (hash == null) {
      w.nil();
    } else {
      w.unsigned(hash);
    }
  }

  private static void tokens(MsgpackWriter w, int[] tokens) {
    w.arrayHeader(tokens.length);
    for (int t : tokens) {
      w.integer(t);
    }
  }

  private static void optionalString(MsgpackWriter w, @Nullable String s) {
    if (s == null) {
      w.nil();
    } else {
      w.str(s);
    }
  }

  private static String medium(KvEvent.Medium m) {
    return switch (m) {
      case GPU -> MEDIUM_GPU;
      case CPU -> "CPU";
      case OTHER -> "OTHER";
    };
  }
}
