package dev.kinference.testkit.vllm;

import dev.kinference.cache.KvEvent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Encodes KV-event batches as vLLM publishes them, for test publishers, tools and benchmarks, in each
 * {@link Layout} vLLM has used: {@link Layout#MAP} (vLLM 0.26: array batch, map events), {@link Layout#MAP_ENVELOPE}
 * (map batch too) and {@link Layout#ARRAY} (older vLLM: arrays throughout). Block
 * hashes are written as msgpack integers of the smallest size, unsigned ({@code 0xcf}) for values at or above 2^63
 * read as unsigned.
 *
 * <p>Stateless and thread-safe.
 */
public final class KvEventEncoder {

  /** The msgpack layout of batches and events. */
  public enum Layout {
    /**
     * vLLM 0.26's encoding (vllm-project/vllm#42892): the batch a positional array {@code [ts, events,
     * data_parallel_rank]}, each event a map tagged with {@code "type"}, fields at their default left out (a payload
     * captured from vLLM v0.26.0 is in volcano-sh/kthena#1535).
     */
    MAP,
    /**
     * The batch as a map too ({@code {"ts", "events", "data_parallel_rank"}}), as vLLM's source writes it where
     * {@code EventBatch} is declared without {@code array_like} (kv_events.py at commit 0181ea3).
     */
    MAP_ENVELOPE,
    /** Older vLLM's {@code array_like} encoding: batch and events positional arrays, the event's tag first. */
    ARRAY
  }

  private final Layout layout;

  private KvEventEncoder(Layout layout) {
    this.layout = layout;
  }

  public static KvEventEncoder of(Layout layout) {
    return new KvEventEncoder(layout);
  }

  /**
   * The KV-cache group of an event, as vLLM tags events of hybrid models ({@code group_idx},
   * {@code kv_cache_spec_kind}, {@code kv_cache_spec_sliding_window}; the last two on {@code BlockStored} only).
   *
   * @param index the group index
   * @param kind vLLM's {@code KVCacheSpecKind} value ({@code full_attention}, {@code sliding_window},
   *     {@code mamba}, ...), or null to leave it out
   * @param slidingWindow the window in tokens, or 0 to leave it out
   */
  public record Group(int index, @Nullable String kind, int slidingWindow) {}

  /** Encodes one batch; a negative {@code dataParallelRank} is written as nil (map: omitted). */
  public byte[] encode(double timestamp, List<? extends KvEvent> events, int dataParallelRank) {
    return encode(timestamp, events, null, dataParallelRank);
  }

  /**
   * Encodes one batch whose events carry their KV-cache group ({@code groups}: one per event, same order), as vLLM
   * does for hybrid models; null writes no group fields, as older vLLM does.
   */
  public byte[] encode(double timestamp, List<? extends KvEvent> events, @Nullable List<Group> groups,
      int dataParallelRank) {
    if (groups != null && groups.size() != events.size()) {
      throw new IllegalArgumentException(groups.size() + " groups for " + events.size() + " events");
    }
    Out out = new Out();
    if (layout == Layout.MAP_ENVELOPE) {
      out.mapHeader(dataParallelRank >= 0 ? 3 : 2);
      out.str("ts");
      out.float64(timestamp);
      out.str("events");
    } else {
      out.arrayHeader(3);
      out.float64(timestamp);
    }
    out.arrayHeader(events.size());
    for (int i = 0; i < events.size(); i++) {
      writeEvent(out, events.get(i), groups == null ? null : groups.get(i));
    }
    if (layout == Layout.MAP_ENVELOPE) {
      if (dataParallelRank >= 0) {
        out.str("data_parallel_rank");
        out.integer(dataParallelRank);
      }
    } else if (dataParallelRank >= 0) {
      out.integer(dataParallelRank);
    } else {
      out.nil();
    }
    return out.toByteArray();
  }

  private void writeEvent(Out out, KvEvent e, @Nullable Group group) {
    switch (e) {
      case KvEvent.BlockStored s -> {
        boolean salt = s.cacheSalt() != null || s.loraName() != null;
        if (layout != Layout.ARRAY) {
          out.mapHeader(8 + (salt ? 1 : 0) + groupFields(group));
          out.str("type");
          out.str("BlockStored");
          out.str("block_hashes");
          hashes(out, s.blockHashes());
          out.str("parent_block_hash");
          nullableHash(out, s.parentBlockHash());
          out.str("token_ids");
          tokens(out, s.tokenIds());
          out.str("block_size");
          out.integer(s.blockSize());
          out.str("lora_id");
          out.nil();
          out.str("medium");
          out.str(s.medium().name());
          out.str("lora_name");
          nullableStr(out, s.loraName());
          if (salt) {
            out.str("extra_keys");
            extraKeys(out, s);
          }
          if (group != null) {
            out.str("group_idx");
            out.integer(group.index());
            if (group.kind() != null) {
              out.str("kv_cache_spec_kind");
              out.str(group.kind());
            }
            if (group.slidingWindow() > 0) {
              out.str("kv_cache_spec_sliding_window");
              out.integer(group.slidingWindow());
            }
          }
        } else {
          out.arrayHeader(group != null ? 12 : salt ? 9 : 8);
          out.str("BlockStored");
          hashes(out, s.blockHashes());
          nullableHash(out, s.parentBlockHash());
          tokens(out, s.tokenIds());
          out.integer(s.blockSize());
          out.nil();
          out.str(s.medium().name());
          nullableStr(out, s.loraName());
          if (salt) {
            extraKeys(out, s);
          } else if (group != null) {
            out.nil();
          }
          if (group != null) {
            out.integer(group.index());
            nullableStr(out, group.kind());
            if (group.slidingWindow() > 0) {
              out.integer(group.slidingWindow());
            } else {
              out.nil();
            }
          }
        }
      }
      case KvEvent.BlockRemoved r -> {
        if (layout != Layout.ARRAY) {
          out.mapHeader(group != null ? 4 : 3);
          out.str("type");
          out.str("BlockRemoved");
          out.str("block_hashes");
          hashes(out, r.blockHashes());
          out.str("medium");
          out.str(r.medium().name());
          if (group != null) {
            out.str("group_idx");
            out.integer(group.index());
          }
        } else {
          out.arrayHeader(group != null ? 4 : 3);
          out.str("BlockRemoved");
          hashes(out, r.blockHashes());
          out.str(r.medium().name());
          if (group != null) {
            out.integer(group.index());
          }
        }
      }
      case KvEvent.AllBlocksCleared c -> {
        if (layout != Layout.ARRAY) {
          out.mapHeader(1);
          out.str("type");
        } else {
          out.arrayHeader(1);
        }
        out.str("AllBlocksCleared");
      }
    }
  }

  private static int groupFields(@Nullable Group group) {
    if (group == null) {
      return 0;
    }
    return 1 + (group.kind() != null ? 1 : 0) + (group.slidingWindow() > 0 ? 1 : 0);
  }

  /** vLLM's per-block extra keys: (lora name?, salt?) for the first block, (lora name) or nil for the others. */
  private static void extraKeys(Out out, KvEvent.BlockStored s) {
    int blocks = s.blockHashes().length;
    out.arrayHeader(blocks);
    for (int b = 0; b < blocks; b++) {
      if (b == 0) {
        String lora = s.loraName();
        String cacheSalt = s.cacheSalt();
        out.arrayHeader((lora == null ? 0 : 1) + (cacheSalt == null ? 0 : 1));
        if (lora != null) {
          out.str(lora);
        }
        if (cacheSalt != null) {
          out.str(cacheSalt);
        }
      } else if (s.loraName() != null) {
        out.arrayHeader(1);
        out.str(String.valueOf(s.loraName()));
      } else {
        out.nil();
      }
    }
  }

  private static void hashes(Out out, long[] hashes) {
    out.arrayHeader(hashes.length);
    for (long h : hashes) {
      out.unsigned(h);
    }
  }

  private static void tokens(Out out, int[] tokens) {
    out.arrayHeader(tokens.length);
    for (int t : tokens) {
      out.integer(t);
    }
  }

  private static void nullableHash(Out out, @Nullable Long hash) {
    if (hash == null) {
      out.nil();
    } else {
      out.unsigned(hash);
    }
  }

  private static void nullableStr(Out out, @Nullable String s) {
    if (s == null) {
      out.nil();
    } else {
      out.str(s);
    }
  }

  /** A minimal msgpack writer. */
  private static final class Out extends ByteArrayOutputStream {
    Out() {
      super(256);
    }

    void nil() {
      write(0xc0);
    }

    void mapHeader(int n) {
      if (n < 16) {
        write(0x80 | n);
      } else {
        write(0xde);
        u16(n);
      }
    }

    void arrayHeader(int n) {
      if (n < 16) {
        write(0x90 | n);
      } else if (n < 65536) {
        write(0xdc);
        u16(n);
      } else {
        write(0xdd);
        u32(n);
      }
    }

    void str(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      if (b.length < 32) {
        write(0xa0 | b.length);
      } else if (b.length < 256) {
        write(0xd9);
        write(b.length);
      } else {
        write(0xda);
        u16(b.length);
      }
      write(b, 0, b.length);
    }

    void float64(double d) {
      write(0xcb);
      u64(Double.doubleToLongBits(d));
    }

    /** A signed integer, smallest form (as msgspec writes Python ints). */
    void integer(long v) {
      if (v >= 0) {
        unsigned(v);
      } else if (v >= -32) {
        write((int) v & 0xff);
      } else if (v >= Byte.MIN_VALUE) {
        write(0xd0);
        write((int) v & 0xff);
      } else if (v >= Short.MIN_VALUE) {
        write(0xd1);
        u16((int) v);
      } else if (v >= Integer.MIN_VALUE) {
        write(0xd2);
        u32((int) v);
      } else {
        write(0xd3);
        u64(v);
      }
    }

    /** The 64 bits of {@code v} as an unsigned integer, smallest form. */
    void unsigned(long v) {
      if (v >= 0 && v < 128) {
        write((int) v);
      } else if (v >= 0 && v < 256) {
        write(0xcc);
        write((int) v);
      } else if (v >= 0 && v < 65536) {
        write(0xcd);
        u16((int) v);
      } else if (v >= 0 && v < (1L << 32)) {
        write(0xce);
        u32((int) v);
      } else {
        write(0xcf);
        u64(v);
      }
    }

    private void u16(int v) {
      write(v >>> 8);
      write(v);
    }

    private void u32(int v) {
      write(v >>> 24);
      write(v >>> 16);
      write(v >>> 8);
      write(v);
    }

    private void u64(long v) {
      u32((int) (v >>> 32));
      u32((int) v);
    }
  }
}
