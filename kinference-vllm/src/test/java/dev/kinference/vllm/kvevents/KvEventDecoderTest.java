package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.cache.HybridGroups;
import dev.kinference.cache.KvEvent;
import dev.kinference.testkit.vllm.KvEventEncoder;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fixed byte fixtures, written by hand from vLLM's msgspec encoding rules (vllm/distributed/kv_events.py:
 * {@code KVCacheEvent} structs are {@code tag=True, omit_defaults=True}; newer versions encode structs as maps,
 * older ones as arrays with {@code array_like=True}; Python ints are written in their smallest msgpack form,
 * unsigned {@code 0xcf} above 2^63).
 */
class KvEventDecoderTest {

  static final int[] QWEN_PREFIX = {151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198, 151644, 872,
      198, 9707, 0};

  /**
   * The sample of the reference (shared/reference/vllm-wire-formats.md, section 1), completed: a batch array
   * {@code [ts, events, dp_rank]} whose events are maps: a BlockStored with hash 15760518052499183552 (above 2^63),
   * a BlockRemoved of it and an AllBlocksCleared, from rank 0.
   */
  static final String REFERENCE_SAMPLE = """
      93                                      # batch: array(3)
      cb 41daa8dbe0359fe7                     # ts = 1789095808.8378847
      93                                      # events: array(3)
      8b                                      # event 0: map(11)
      a4 74797065                             #   "type"
      ab 426c6f636b53746f726564               #   "BlockStored"
      ac 626c6f636b5f686173686573             #   "block_hashes"
      91 cf dab89baa7b5857c0                  #   [15760518052499183552]
      b1 706172656e745f626c6f636b5f68617368   #   "parent_block_hash"
      c0                                      #   nil
      a9 746f6b656e5f696473                   #   "token_ids"
      dc 0010                                 #   array16(16)
      ce 0002505c cd 22f4 cc c6 cd 0a32       #   151644 8948 198 2610
      cd 020d cd 0108 cd 2ac6 cd 45b7         #   525 264 10950 17847
      0d ce 0002505d cc c6 ce 0002505c        #   13 151645 198 151644
      cd 0368 cc c6 cd 25eb 00                #   872 198 9707 0
      aa 626c6f636b5f73697a65                 #   "block_size"
      10                                      #   16
      a7 6c6f72615f6964                       #   "lora_id"
      c0                                      #   nil
      a6 6d656469756d                         #   "medium"
      a3 475055                               #   "GPU"
      a9 6c6f72615f6e616d65                   #   "lora_name"
      c0                                      #   nil
      aa 65787472615f6b657973                 #   "extra_keys"
      91 91 a8 74656e616e742d61               #   [["tenant-a"]]: the first block's cache_salt
      a9 67726f75705f696478                   #   "group_idx"
      00                                      #   0
      b2 6b765f63616368655f737065635f6b696e64 #   "kv_cache_spec_kind"
      ae 66756c6c5f617474656e74696f6e         #   "full_attention"
      83                                      # event 1: map(3)
      a4 74797065 ac 426c6f636b52656d6f766564 #   "type": "BlockRemoved"
      ac 626c6f636b5f686173686573             #   "block_hashes"
      91 cf dab89baa7b5857c0                  #   [15760518052499183552]
      a6 6d656469756d a3 475055               #   "medium": "GPU"
      81                                      # event 2: map(1)
      a4 74797065                             #   "type"
      b0 416c6c426c6f636b73436c6561726564     #   "AllBlocksCleared"
      00                                      # data_parallel_rank 0
      """;

  static byte[] hex(String annotated) {
    StringBuilder sb = new StringBuilder();
    for (String line : annotated.split("\n")) {
      int hash = line.indexOf('#');
      sb.append((hash >= 0 ? line.substring(0, hash) : line).replaceAll("\\s+", ""));
    }
    return HexFormat.of().parseHex(sb.toString());
  }

  final KvEventDecoder decoder = new KvEventDecoder();

  @Test
  void decodesTheReferenceSample() {
    KvEventBatch batch = decoder.decode(hex(REFERENCE_SAMPLE));

    assertThat(batch.timestamp()).isEqualTo(1789095808.8378847);
    assertThat(batch.dataParallelRank()).isZero();
    assertThat(batch.skippedEvents()).isZero();
    long hash = Long.parseUnsignedLong("15760518052499183552");
    assertThat(batch.events()).containsExactly(
        new KvEvent.BlockStored(new long[] {hash}, null, QWEN_PREFIX, 16, null, KvEvent.Medium.GPU, "tenant-a"),
        new KvEvent.BlockRemoved(new long[] {hash}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared());
    assertThat(Long.toUnsignedString(((KvEvent.BlockStored) batch.events().get(0)).blockHashes()[0]))
        .isEqualTo("15760518052499183552");
  }

  @Test
  void decodesAMapBatchWithHashesAtAndAbove2To63() {
    String fixture = """
        82                                      # batch: map(2), rank omitted
        a2 7473 cb 41daa8dbe0359fe7             # "ts": 1789095808.8378847
        a6 6576656e7473 91                      # "events": array(1)
        88                                      # map(8): extra_keys and group_idx omitted (defaults)
        a4 74797065 ab 426c6f636b53746f726564   #   "type": "BlockStored"
        ac 626c6f636b5f686173686573             #   "block_hashes"
        92 cf 8000000000000000 cf ffffffffffffffff #   [2^63, 2^64-1]
        b1 706172656e745f626c6f636b5f68617368   #   "parent_block_hash"
        cf 7fffffffffffffff                     #   2^63-1
        a9 746f6b656e5f696473                   #   "token_ids"
        94 01 02 03 04                          #   [1, 2, 3, 4]
        aa 626c6f636b5f73697a65 02              #   "block_size": 2
        a7 6c6f72615f6964 c0                    #   "lora_id": nil
        a6 6d656469756d a3 435055               #   "medium": "CPU"
        a9 6c6f72615f6e616d65 a7 6d792d6c6f7261 #   "lora_name": "my-lora"
        """;
    KvEventBatch batch = decoder.decode(hex(fixture));

    assertThat(batch.dataParallelRank()).isEqualTo(-1);
    KvEvent.BlockStored stored = (KvEvent.BlockStored) batch.events().get(0);
    assertThat(stored.blockHashes()).containsExactly(Long.MIN_VALUE, -1L);
    assertThat(Long.toUnsignedString(stored.blockHashes()[0])).isEqualTo("9223372036854775808");
    assertThat(Long.toUnsignedString(stored.blockHashes()[1])).isEqualTo("18446744073709551615");
    assertThat(stored.parentBlockHash()).isEqualTo(Long.MAX_VALUE);
    assertThat(stored.tokenIds()).containsExactly(1, 2, 3, 4);
    assertThat(stored.blockSize()).isEqualTo(2);
    assertThat(stored.medium()).isEqualTo(KvEvent.Medium.CPU);
    assertThat(stored.loraName()).isEqualTo("my-lora");
    assertThat(stored.cacheSalt()).isNull();
  }

  @Test
  void decodesTheOlderArrayEncodingWithMissingTrailingFields() {
    String fixture = """
        92                                      # batch: array(2) [ts, events], no rank (oldest)
        cb 41d954fc40200000                     # ts = 1700000000.5
        93                                      # events: array(3)
        96                                      # array(6): tag + 5 fields, no medium (oldest BlockStored)
        ab 426c6f636b53746f726564               #   "BlockStored"
        92 d3 fffffffffffffffe 2a               #   [-2 (signed int64), 42]
        c0                                      #   parent: nil
        94 0a 0b 0c 0d                          #   tokens [10, 11, 12, 13]
        02                                      #   block_size 2
        07                                      #   lora_id 7, no lora_name
        92                                      # array(2): BlockRemoved without medium
        ac 426c6f636b52656d6f766564             #   "BlockRemoved"
        91 2a                                   #   [42]
        91                                      # array(1)
        b0 416c6c426c6f636b73436c6561726564     #   "AllBlocksCleared"
        """;
    KvEventBatch batch = decoder.decode(hex(fixture));

    assertThat(batch.timestamp()).isEqualTo(1700000000.5);
    assertThat(batch.dataParallelRank()).isEqualTo(-1);
    assertThat(batch.events()).containsExactly(
        new KvEvent.BlockStored(new long[] {-2, 42}, null, new int[] {10, 11, 12, 13}, 2, "#lora-id:7",
            KvEvent.Medium.GPU, null),
        new KvEvent.BlockRemoved(new long[] {42}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared());
  }

  @Test
  void decodesTheArrayEncodingWithEveryField() {
    String fixture = """
        93 cb 41d954fc40200000                  # batch: array(3), ts
        91                                      # events: array(1)
        9c                                      # array(12): tag + 11 fields
        ab 426c6f636b53746f726564               #   "BlockStored"
        91 cf dab89baa7b5857c0                  #   block_hashes
        cd 1234                                 #   parent 0x1234
        92 05 06                                #   tokens
        02                                      #   block_size
        c0                                      #   lora_id
        a3 475055                               #   medium "GPU"
        a7 6d792d6c6f7261                       #   lora_name "my-lora"
        91 92 a7 6d792d6c6f7261 a6 73616c742d31 #   extra_keys [["my-lora", "salt-1"]] (ignored: has a parent)
        00                                      #   group_idx 0
        ae 66756c6c5f617474656e74696f6e         #   kv_cache_spec_kind
        c0                                      #   kv_cache_spec_sliding_window
        03                                      # rank 3
        """;
    KvEventBatch batch = decoder.decode(hex(fixture));

    assertThat(batch.dataParallelRank()).isEqualTo(3);
    assertThat(batch.events()).containsExactly(new KvEvent.BlockStored(
        new long[] {Long.parseUnsignedLong("15760518052499183552")}, 0x1234L, new int[] {5, 6}, 2, "my-lora",
        KvEvent.Medium.GPU, null));
  }

  @Test
  void cacheSaltFollowsTheLoraNameAndMultimodalKeysInTheFirstBlock() {
    String fixture = """
        92 00 91                                # batch [0, [event]]
        89                                      # map(9)
        a4 74797065 ab 426c6f636b53746f726564   #   "type": "BlockStored"
        ac 626c6f636b5f686173686573 92 01 02    #   "block_hashes": [1, 2]
        b1 706172656e745f626c6f636b5f68617368 c0 #  "parent_block_hash": nil
        a9 746f6b656e5f696473 92 07 08          #   "token_ids": [7, 8]
        aa 626c6f636b5f73697a65 01              #   "block_size": 1
        a7 6c6f72615f6964 c0                    #   "lora_id": nil
        a6 6d656469756d c0                      #   "medium": nil (GPU)
        aa 65787472615f6b657973                 #   "extra_keys" before "lora_name": order must not matter
        92                                      #   two blocks
        93 a7 6d792d6c6f7261 92 a2 6d6d 00 a6 73616c742d31 #  ("my-lora", ("mm", 0), "salt-1")
        91 a7 6d792d6c6f7261                    #   ("my-lora",)
        a9 6c6f72615f6e616d65 a7 6d792d6c6f7261 #   "lora_name": "my-lora"
        """;
    KvEvent.BlockStored stored = (KvEvent.BlockStored) decoder.decode(hex(fixture)).events().get(0);

    assertThat(stored.loraName()).isEqualTo("my-lora");
    assertThat(stored.cacheSalt()).isEqualTo("salt-1");
    assertThat(stored.medium()).isEqualTo(KvEvent.Medium.GPU);
  }

  @Test
  void aLoraNameAloneIsNotTakenForASalt() {
    KvEvent.BlockStored event = new KvEvent.BlockStored(new long[] {1}, null, new int[] {1, 2}, 2, "adapter",
        KvEvent.Medium.GPU, null);
    byte[] bytes = KvEventEncoder.of(KvEventEncoder.Layout.MAP).encode(1.0, List.of(event), 0);

    assertThat(decoder.decode(bytes).events()).containsExactly(event);
  }

  @Test
  void byteStringHashesUseTheirLastEightBytesBigEndian() {
    String fixture = """
        92 00 91                                # batch [0, [event]]
        93 ac 426c6f636b52656d6f766564          # ["BlockRemoved", hashes, medium]
        93                                      # three hashes
        c4 20 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f # sha256 digest (32 bytes)
        c4 10 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff  # 16-byte digest
        c4 03 010203                            # short: zero-extended
        a3 475055
        """;
    KvEvent.BlockRemoved removed = (KvEvent.BlockRemoved) decoder.decode(hex(fixture)).events().get(0);

    assertThat(removed.blockHashes()).containsExactly(0x18191a1b1c1d1e1fL, 0xf8f9fafbfcfdfeffL, 0x010203L);
  }

  @Test
  void skipsUnknownEventTypesAndKeepsEveryCacheGroup() {
    String fixture = """
        92 00 93                                # batch [0, [3 events]]
        92 a8 4e6577457665e274 01               # ["NewEve\\xe2t", 1]: an unknown type
        83 a4 74797065 ac 426c6f636b52656d6f766564 # {"type": "BlockRemoved",
        ac 626c6f636b5f686173686573 91 07       #  "block_hashes": [7],
        a9 67726f75705f696478 01                #  "group_idx": 1}  (a group of a hybrid model)
        91 b0 416c6c426c6f636b73436c6561726564  # ["AllBlocksCleared"]
        """;
    KvEventBatch batch = decoder.decode(hex(fixture));

    assertThat(batch.skippedEvents()).isEqualTo(1);
    assertThat(batch.events()).containsExactly(new KvEvent.BlockRemoved(new long[] {7}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared());
    assertThat(batch.groups()).containsExactly(new KvCacheGroup(1, null, 0), KvCacheGroup.UNDESCRIBED);
  }

  /**
   * A hybrid model's events as vLLM's msgspec writes them (kv_events.py: tag first, fields in declaration order,
   * {@code extra_keys} omitted at its default, the group fields last), in the map envelope of vLLM's source at
   * commit 0181ea3; vLLM 0.26 sends the same events in an array envelope (the other tests).
   */
  @Test
  void decodesTheGroupOfAHybridModelsEvents() {
    String fixture = """
        83 a2 7473 cb 3ff8000000000000 a6 6576656e7473 92   # {"ts": 1.5, "events": [
        8b a4 74797065 ab 426c6f636b53746f726564            # {"type": "BlockStored",
        ac 626c6f636b5f686173686573 91 cf dab89baa7b5857c0  #  "block_hashes": [15760518052499183552],
        b1 706172656e745f626c6f636b5f68617368 c0            #  "parent_block_hash": None,
        a9 746f6b656e5f696473 94 01 02 03 04                #  "token_ids": [1, 2, 3, 4],
        aa 626c6f636b5f73697a65 04                          #  "block_size": 4,
        a7 6c6f72615f6964 c0                                #  "lora_id": None,
        a6 6d656469756d a3 475055                           #  "medium": "GPU",
        a9 6c6f72615f6e616d65 c0                            #  "lora_name": None,
        a9 67726f75705f696478 01                            #  "group_idx": 1,
        b2 6b765f63616368655f737065635f6b696e64             #  "kv_cache_spec_kind":
        ae 736c6964696e675f77696e646f77                     #    "sliding_window",
        bc 6b765f63616368655f737065635f736c6964696e675f77696e646f77 #  "kv_cache_spec_sliding_window":
        cd 1000                                             #    4096},
        84 a4 74797065 ac 426c6f636b52656d6f766564          # {"type": "BlockRemoved",
        ac 626c6f636b5f686173686573 91 cf dab89baa7b5857c0  #  "block_hashes": [15760518052499183552],
        a6 6d656469756d a3 435055                           #  "medium": "CPU",
        a9 67726f75705f696478 01                            #  "group_idx": 1}],
        b2 646174615f706172616c6c656c5f72616e6b 00          # "data_parallel_rank": 0}
        """;
    KvEventBatch batch = decoder.decode(hex(fixture));

    assertThat(batch.groups()).containsExactly(new KvCacheGroup(1, "sliding_window", 4096),
        new KvCacheGroup(1, null, 0));
    assertThat(batch.groups().get(0).role()).isEqualTo(HybridGroups.Role.SLIDING_WINDOW);
    assertThat(batch.events().get(1)).isEqualTo(
        new KvEvent.BlockRemoved(new long[] {0xdab89baa7b5857c0L}, KvEvent.Medium.CPU));
    KvEventEncoder enc = KvEventEncoder.of(KvEventEncoder.Layout.MAP_ENVELOPE);
    assertThat(enc.encode(1.5, batch.events(), List.of(new KvEventEncoder.Group(1, "sliding_window", 4096),
        new KvEventEncoder.Group(1, null, 0)), 0)).as("the test encoder writes what vLLM writes")
        .isEqualTo(hex(fixture));
  }

  @Test
  void everyTruncationOfAValidPayloadIsRejectedWithAReason() {
    byte[] full = hex(REFERENCE_SAMPLE);
    for (int len = 0; len < full.length; len++) {
      int cut = len;
      assertThatThrownBy(() -> decoder.decode(full, 0, cut))
          .as("prefix of %d bytes", cut)
          .isInstanceOf(KvEventFormatException.class)
          .hasMessageContaining(cut == 0 ? "empty payload" : "truncated");
    }
    assertThat(decoder.decode(full).events()).hasSize(3);
  }

  @Test
  void garbageIsRejectedWithAReason() {
    assertThatThrownBy(() -> decoder.decode(hex("c1"))).isInstanceOf(KvEventFormatException.class)
        .hasMessageContaining("0xc1");
    assertThatThrownBy(() -> decoder.decode("hello world".getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("batch must be an array or a map");
    assertThatThrownBy(() -> decoder.decode(hex("92 00 91 92 ab 426c6f636b53746f726564 91 a1 78")))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("block hash");
    assertThatThrownBy(() -> decoder.decode(hex("92 00 91 95 ab 426c6f636b53746f726564 91 01 c0 90 00")))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("block_size");
    assertThatThrownBy(() -> decoder.decode(hex("92 00 90 00")))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("trailing bytes");
    assertThatThrownBy(() -> decoder.decode(hex("92 00 dd ffffffff")))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("truncated array");
    assertThatThrownBy(() -> decoder.decode(hex("92 00 91 92 ab 426c6f636b53746f726564 91 cf 00")))
        .isInstanceOf(KvEventFormatException.class).hasMessageContaining("truncated");
  }

  @Test
  void encoderRoundTripsBothLayouts() {
    List<KvEvent> events = List.of(
        new KvEvent.BlockStored(new long[] {Long.MIN_VALUE, -1, 0, 127, 1L << 40}, -5L,
            new int[] {0, 127, 128, 255, 256, 65535, 65536, Integer.MAX_VALUE, 1, 2}, 2, null, KvEvent.Medium.CPU,
            null),
        new KvEvent.BlockStored(new long[] {9}, null, new int[] {3}, 1, "l", KvEvent.Medium.GPU, "salt"),
        new KvEvent.BlockRemoved(new long[] {Long.MIN_VALUE}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared());
    for (KvEventEncoder.Layout layout : KvEventEncoder.Layout.values()) {
      byte[] bytes = KvEventEncoder.of(layout).encode(12.5, events, 2);
      KvEventBatch batch = decoder.decode(bytes);
      assertThat(batch.events()).as("%s", layout).isEqualTo(events);
      assertThat(batch.dataParallelRank()).isEqualTo(2);
      assertThat(batch.timestamp()).isEqualTo(12.5);
    }
  }
}
