package dev.kinference.vllm.kvevents;

import dev.kinference.cache.KvEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decodes the msgpack payload of one vLLM KV-event message (the third frame) into {@link KvEvent}s, accepting
 * every encoding vLLM has published:
 *
 * <ul>
 *   <li>the batch as an array {@code [ts, events, data_parallel_rank?]} (what vLLM releases send, 0.26 included) or
 *       as a map with those keys (vLLM's source where {@code EventBatch} is not {@code array_like});</li>
 *   <li>each event as a tagged map {@code {"type": "BlockStored", "block_hashes": ..., ...}} (keys in any order,
 *       fields with default values omitted) or as a tagged array {@code ["BlockStored", block_hashes,
 *       parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, extra_keys, group_idx, ...]} whose
 *       trailing fields may be missing;</li>
 *   <li>block hashes as unsigned 64-bit integers (including values at or above 2^63, msgpack {@code 0xcf}), signed
 *       64-bit integers, or byte strings (their last 8 bytes, big-endian).</li>
 * </ul>
 *
 * <p>LoRA: {@code lora_name} names the adapter; an old server that sends only {@code lora_id} gets the name
 * {@code "#lora-id:<id>"}, so its adapter blocks never match base-model prompts. The cache salt is taken from the
 * first block's {@code extra_keys} when the event starts a sequence (no parent): vLLM orders them LoRA name,
 * multimodal keys, salt, prompt-embedding digest, so the salt is the last top-level string that is not the LoRA
 * name. Each event comes with its KV-cache group ({@link KvCacheGroup}: {@code group_idx},
 * {@code kv_cache_spec_kind}, {@code kv_cache_spec_sliding_window}); which groups count is the subscriber's decision.
 * Event types this decoder does not know are skipped and counted.
 *
 * <p>A payload that is truncated, not msgpack, or of another shape is rejected whole with a
 * {@link KvEventFormatException} naming the reason; nothing of it is returned.
 *
 * <p>Not thread-safe (it reuses a cursor): use one decoder per thread. Values are read in place from the byte
 * array; the only allocations are the returned events, their arrays, and strings for LoRA names not seen just
 * before.
 */
public final class KvEventDecoder {

  private static final byte[] BLOCK_STORED = ascii("BlockStored");
  private static final byte[] BLOCK_REMOVED = ascii("BlockRemoved");
  private static final byte[] ALL_BLOCKS_CLEARED = ascii("AllBlocksCleared");
  private static final byte[] GPU = ascii("GPU");
  private static final byte[] CPU = ascii("CPU");

  private static final byte[] K_TS = ascii("ts");
  private static final byte[] K_EVENTS = ascii("events");
  private static final byte[] K_DP_RANK = ascii("data_parallel_rank");
  private static final byte[] K_TYPE = ascii("type");
  private static final byte[] K_BLOCK_HASHES = ascii("block_hashes");
  private static final byte[] K_PARENT = ascii("parent_block_hash");
  private static final byte[] K_TOKEN_IDS = ascii("token_ids");
  private static final byte[] K_BLOCK_SIZE = ascii("block_size");
  private static final byte[] K_LORA_ID = ascii("lora_id");
  private static final byte[] K_MEDIUM = ascii("medium");
  private static final byte[] K_LORA_NAME = ascii("lora_name");
  private static final byte[] K_EXTRA_KEYS = ascii("extra_keys");
  private static final byte[] K_GROUP_IDX = ascii("group_idx");
  private static final byte[] K_SPEC_KIND = ascii("kv_cache_spec_kind");
  private static final byte[] K_SLIDING_WINDOW = ascii("kv_cache_spec_sliding_window");

  private static final int STORED = 1;
  private static final int REMOVED = 2;
  private static final int CLEARED = 3;
  private static final int UNKNOWN = 0;

  private final MsgpackReader in = new MsgpackReader();

  // The fields of the event being decoded; reset per event.
  private int type;
  private long @Nullable [] hashes;
  private boolean hasParent;
  private long parent;
  private int @Nullable [] tokens;
  private int blockSize;
  private long loraId;
  private boolean hasLoraId;
  private @Nullable String loraName;
  private KvEvent.Medium medium = KvEvent.Medium.GPU;
  // The last top-level string of the first block's extra keys, and its position: the salt candidate.
  private @Nullable String lastExtraString;
  private int lastExtraStringIndex;
  private long groupIdx;
  private @Nullable String specKind;
  private long slidingWindow;
  // The last group decoded, so a stream of one group's events allocates it once.
  private KvCacheGroup lastGroup = KvCacheGroup.UNDESCRIBED;
  private byte[] lastKindBytes = new byte[0];
  private @Nullable String lastKind;

  // The last LoRA name decoded, so a stream of one adapter's events allocates its name once.
  private byte[] lastLoraBytes = new byte[0];
  private @Nullable String lastLora;

  public KvEventDecoder() {}

  /** Decodes a whole payload. */
  public KvEventBatch decode(byte[] payload) {
    return decode(payload, 0, payload.length);
  }

  /**
   * Decodes {@code payload[offset, offset + length)}.
   *
   * @throws KvEventFormatException if it is not one well-formed {@code KVEventBatch}; the message gives the reason
   */
  public KvEventBatch decode(byte[] payload, int offset, int length) {
    if (length == 0) {
      throw new KvEventFormatException("empty payload");
    }
    in.reset(payload, offset, length);
    try {
      KvEventBatch batch = readBatch();
      if (in.hasRemaining()) {
        throw in.fail("trailing bytes after the batch");
      }
      return batch;
    } catch (IllegalArgumentException e) {
      // A record constructor refused a decoded value (such as a negative block_size). Only that: the decoder checks
      // every field a record requires before building it, so a NullPointerException here is a bug to surface.
      throw new KvEventFormatException("invalid event: " + e.getMessage() + " (before byte " + in.position() + ")", e);
    }
  }

  private KvEventBatch readBatch() {
    MsgpackReader.Type t = in.peekType();
    double ts = Double.NaN;
    int rank = -1;
    List<KvEvent> events = null;
    List<KvCacheGroup> groups = new ArrayList<>();
    int[] skipped = new int[1];
    if (t == MsgpackReader.Type.ARRAY) {
      int n = in.readArrayHeader();
      if (n < 2) {
        throw in.fail("a batch array needs [ts, events], found " + n + " elements");
      }
      ts = in.readDouble();
      events = readEvents(groups, skipped);
      if (n >= 3) {
        rank = readRank();
      }
      for (int i = 3; i < n; i++) {
        in.skipValue();
      }
    } else if (t == MsgpackReader.Type.MAP) {
      int n = in.readMapHeader();
      for (int i = 0; i < n; i++) {
        int len = in.readStringHeader();
        if (in.payloadEquals(len, K_TS)) {
          ts = in.readDouble();
        } else if (in.payloadEquals(len, K_EVENTS)) {
          events = readEvents(groups, skipped);
        } else if (in.payloadEquals(len, K_DP_RANK)) {
          rank = readRank();
        } else {
          in.skipValue();
        }
      }
      if (events == null) {
        throw in.fail("a batch map needs an 'events' key");
      }
    } else {
      throw in.fail("a batch must be an array or a map, found " + t);
    }
    return new KvEventBatch(ts, rank, events, groups, skipped[0]);
  }

  private int readRank() {
    if (in.tryReadNil()) {
      return -1;
    }
    int r = in.readInt();
    if (r < 0) {
      throw in.fail("negative data_parallel_rank " + r);
    }
    return r;
  }

  private List<KvEvent> readEvents(List<KvCacheGroup> groups, int[] skipped) {
    int n = in.readArrayHeader();
    List<KvEvent> out = new ArrayList<>(n);
    groups.clear(); // a map batch with two 'events' keys keeps the last, as msgpack decoders do
    for (int i = 0; i < n; i++) {
      KvEvent e = readEvent();
      if (e == null) {
        skipped[0]++;
      } else {
        out.add(e);
        groups.add(group());
      }
    }
    return out;
  }

  private KvCacheGroup group() {
    if (groupIdx < 0 || groupIdx > Integer.MAX_VALUE) {
      throw in.fail("group_idx out of range: " + groupIdx);
    }
    if (slidingWindow < 0 || slidingWindow > Integer.MAX_VALUE) {
      throw in.fail("kv_cache_spec_sliding_window out of range: " + slidingWindow);
    }
    KvCacheGroup last = lastGroup;
    if (!last.is((int) groupIdx, specKind, (int) slidingWindow)) {
      last = new KvCacheGroup((int) groupIdx, specKind, (int) slidingWindow);
      lastGroup = last;
    }
    return last;
  }

  private @Nullable KvEvent readEvent() {
    resetFields();
    MsgpackReader.Type t = in.peekType();
    if (t == MsgpackReader.Type.ARRAY) {
      readArrayEvent();
    } else if (t == MsgpackReader.Type.MAP) {
      readMapEvent();
    } else {
      throw in.fail("an event must be an array or a map, found " + t);
    }
    return switch (type) {
      case STORED -> {
        if (hashes == null) {
          throw in.fail("BlockStored without block_hashes");
        }
        if (blockSize == 0) {
          throw in.fail("BlockStored without block_size");
        }
        String lora = loraName;
        if (lora == null && hasLoraId) {
          lora = "#lora-id:" + Long.toUnsignedString(loraId);
        }
        yield new KvEvent.BlockStored(hashes, hasParent ? Long.valueOf(parent) : null,
            tokens == null ? new int[0] : tokens, blockSize, lora, medium, hasParent ? null : cacheSalt());
      }
      case REMOVED -> {
        if (hashes == null) {
          throw in.fail("BlockRemoved without block_hashes");
        }
        yield new KvEvent.BlockRemoved(hashes, medium);
      }
      case CLEARED -> new KvEvent.AllBlocksCleared();
      default -> null;
    };
  }

  /** The salt among the first block's extra keys: the last string, unless it is the leading LoRA name. */
  private @Nullable String cacheSalt() {
    String s = lastExtraString;
    if (s == null || (lastExtraStringIndex == 0 && s.equals(loraName))) {
      return null;
    }
    return s;
  }

  private void resetFields() {
    type = UNKNOWN;
    hashes = null;
    hasParent = false;
    parent = 0;
    tokens = null;
    blockSize = 0;
    hasLoraId = false;
    loraId = 0;
    loraName = null;
    medium = KvEvent.Medium.GPU;
    lastExtraString = null;
    lastExtraStringIndex = -1;
    groupIdx = 0;
    specKind = null;
    slidingWindow = 0;
  }

  private void readArrayEvent() {
    int n = in.readArrayHeader();
    if (n == 0) {
      throw in.fail("an event array needs its type tag");
    }
    type = readTag();
    int fields = n - 1;
    switch (type) {
      case STORED -> {
        // block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, extra_keys,
        // group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window
        for (int f = 0; f < fields; f++) {
          switch (f) {
            case 0 -> hashes = readHashes();
            case 1 -> readParent();
            case 2 -> tokens = readTokens();
            case 3 -> blockSize = in.readInt();
            case 4 -> readLoraId();
            case 5 -> readMedium();
            case 6 -> readLoraName();
            case 7 -> readExtraKeys();
            case 8 -> readGroupIdx();
            case 9 -> readSpecKind();
            case 10 -> readSlidingWindow();
            default -> in.skipValue();
          }
        }
        if (fields < 4) {
          throw in.fail("BlockStored array has " + fields + " fields, needs at least 4");
        }
      }
      case REMOVED -> {
        // block_hashes, medium, group_idx
        for (int f = 0; f < fields; f++) {
          switch (f) {
            case 0 -> hashes = readHashes();
            case 1 -> readMedium();
            case 2 -> readGroupIdx();
            default -> in.skipValue();
          }
        }
      }
      default -> {
        for (int f = 0; f < fields; f++) {
          in.skipValue();
        }
      }
    }
  }

  private void readMapEvent() {
    int n = in.readMapHeader();
    for (int i = 0; i < n; i++) {
      int len = in.readStringHeader();
      if (in.payloadEquals(len, K_TYPE)) {
        type = readTag();
      } else if (in.payloadEquals(len, K_BLOCK_HASHES)) {
        hashes = readHashes();
      } else if (in.payloadEquals(len, K_PARENT)) {
        readParent();
      } else if (in.payloadEquals(len, K_TOKEN_IDS)) {
        tokens = readTokens();
      } else if (in.payloadEquals(len, K_BLOCK_SIZE)) {
        blockSize = in.readInt();
      } else if (in.payloadEquals(len, K_LORA_ID)) {
        readLoraId();
      } else if (in.payloadEquals(len, K_MEDIUM)) {
        readMedium();
      } else if (in.payloadEquals(len, K_LORA_NAME)) {
        readLoraName();
      } else if (in.payloadEquals(len, K_EXTRA_KEYS)) {
        readExtraKeys();
      } else if (in.payloadEquals(len, K_GROUP_IDX)) {
        readGroupIdx();
      } else if (in.payloadEquals(len, K_SPEC_KIND)) {
        readSpecKind();
      } else if (in.payloadEquals(len, K_SLIDING_WINDOW)) {
        readSlidingWindow();
      } else {
        in.skipValue();
      }
    }
  }

  private int readTag() {
    int len = in.readStringHeader();
    if (in.payloadEquals(len, BLOCK_STORED)) {
      return STORED;
    }
    if (in.payloadEquals(len, BLOCK_REMOVED)) {
      return REMOVED;
    }
    if (in.payloadEquals(len, ALL_BLOCKS_CLEARED)) {
      return CLEARED;
    }
    return UNKNOWN;
  }

  private long[] readHashes() {
    int n = in.readArrayHeader();
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = in.readHash();
    }
    return out;
  }

  private void readParent() {
    if (!in.tryReadNil()) {
      parent = in.readHash();
      hasParent = true;
    }
  }

  private int[] readTokens() {
    if (in.tryReadNil()) {
      return new int[0];
    }
    int n = in.readArrayHeader();
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = in.readInt();
    }
    return out;
  }

  private void readLoraId() {
    if (!in.tryReadNil()) {
      loraId = in.readLongBits();
      hasLoraId = true;
    }
  }

  private void readMedium() {
    if (in.tryReadNil()) {
      medium = KvEvent.Medium.GPU;
      return;
    }
    int len = in.readStringHeader();
    if (in.payloadEquals(len, GPU)) {
      medium = KvEvent.Medium.GPU;
    } else if (in.payloadEquals(len, CPU)) {
      medium = KvEvent.Medium.CPU;
    } else {
      medium = KvEvent.Medium.parse(new String(in.buffer(), in.payloadOffset(), len, StandardCharsets.UTF_8));
    }
  }

  private void readLoraName() {
    if (in.tryReadNil()) {
      loraName = null;
      return;
    }
    loraName = readCachedString(in.readStringHeader());
  }

  private String readCachedString(int len) {
    byte[] buf = in.buffer();
    int off = in.payloadOffset();
    String last = lastLora;
    if (last != null && len == lastLoraBytes.length) {
      boolean same = true;
      for (int i = 0; i < len; i++) {
        if (buf[off + i] != lastLoraBytes[i]) {
          same = false;
          break;
        }
      }
      if (same) {
        return last;
      }
    }
    String s = new String(buf, off, len, StandardCharsets.UTF_8);
    lastLoraBytes = java.util.Arrays.copyOfRange(buf, off, off + len);
    lastLora = s;
    return s;
  }

  private void readGroupIdx() {
    groupIdx = in.tryReadNil() ? 0 : in.readLongBits();
  }

  private void readSpecKind() {
    if (in.tryReadNil()) {
      specKind = null;
      return;
    }
    int len = in.readStringHeader();
    String last = lastKind;
    if (last != null && in.payloadEquals(len, lastKindBytes)) {
      specKind = last; // the kind of the event before, most of the time: no new string
      return;
    }
    int off = in.payloadOffset();
    specKind = new String(in.buffer(), off, len, StandardCharsets.UTF_8);
    lastKindBytes = java.util.Arrays.copyOfRange(in.buffer(), off, off + len);
    lastKind = specKind;
  }

  private void readSlidingWindow() {
    slidingWindow = in.tryReadNil() ? 0 : in.readLongBits();
  }

  /** Reads {@code extra_keys} (one entry per block, each a tuple or nil) and keeps the first block's cache salt. */
  private void readExtraKeys() {
    if (in.tryReadNil()) {
      return;
    }
    int blocks = in.readArrayHeader();
    for (int b = 0; b < blocks; b++) {
      if (b > 0 || in.isNil() || in.peekType() != MsgpackReader.Type.ARRAY) {
        in.skipValue();
        continue;
      }
      int n = in.readArrayHeader();
      for (int i = 0; i < n; i++) {
        if (in.peekType() == MsgpackReader.Type.STRING) {
          lastExtraString = in.readString();
          lastExtraStringIndex = i;
        } else {
          in.skipValue();
        }
      }
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
