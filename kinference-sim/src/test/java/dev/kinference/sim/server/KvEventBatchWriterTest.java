package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvEventEncoderTest {

  /** The hash and tokens of a BlockStored event captured from vLLM 0.26 (Qwen3-8B, one block). */
  private static final long CAPTURED_HASH = new BigInteger("15760518052499183552").longValue();
  private static final int[] CAPTURED_TOKENS = {151644, 872, 198, 9064, 374, 279, 6722, 315, 5616, 30, 151645, 198,
      151644, 77091, 198, 151667};
  private static final double CAPTURED_TS = 1789095808.8378847;

  private static List<KvEvent> capturedEvents() {
    return List.of(
        new KvEvent.BlockStored(new long[] {CAPTURED_HASH}, null, CAPTURED_TOKENS, 16, null, KvEvent.Medium.GPU,
            null),
        new KvEvent.BlockRemoved(new long[] {CAPTURED_HASH}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared());
  }

  @Test
  @SuppressWarnings("unchecked")
  void offloadEventsAreWrittenWithMediumCpuAsTheOffloadingConnectorsSelfDescribingEvents() {
    List<KvEvent> events = List.of(
        new KvEvent.BlockStored(new long[] {CAPTURED_HASH}, 7L, CAPTURED_TOKENS, 16, null, KvEvent.Medium.CPU, null),
        new KvEvent.BlockRemoved(new long[] {CAPTURED_HASH}, KvEvent.Medium.CPU));
    for (KvEventFormat format : KvEventFormat.values()) {
      List<Object> batch = (List<Object>) Msgpack.decode(
          new KvEventBatchWriter(format, 0, Map.of()).encodeBatch(CAPTURED_TS, events));
      List<Object> decoded = (List<Object>) batch.get(1);
      if (format == KvEventFormat.MAP) {
        Map<Object, Object> stored = (Map<Object, Object>) decoded.get(0);
        assertThat(stored).containsEntry("medium", "CPU").containsEntry("parent_block_hash", 7L)
            .containsEntry("block_size", 16L);
        assertThat((List<Object>) stored.get("token_ids")).hasSize(16);
        assertThat((Map<Object, Object>) decoded.get(1)).containsEntry("medium", "CPU");
      } else {
        assertThat(((List<Object>) decoded.get(0)).get(6)).isEqualTo("CPU");
        assertThat(((List<Object>) decoded.get(1)).get(2)).isEqualTo("CPU");
      }
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void aSlidingWindowGroupsEventsCarryItsIndexKindAndWindowInBothForms() {
    List<KvEvent> events = List.of(
        new KvEvent.BlockStored(new long[] {CAPTURED_HASH}, null, CAPTURED_TOKENS, 16, null, KvEvent.Medium.GPU,
            null),
        new KvEvent.BlockStored(new long[] {CAPTURED_HASH}, null, CAPTURED_TOKENS, 16, null, KvEvent.Medium.GPU,
            null),
        new KvEvent.BlockRemoved(new long[] {CAPTURED_HASH}, KvEvent.Medium.GPU));
    List<Integer> groups = List.of(0, 1, 1);
    for (KvEventFormat format : KvEventFormat.values()) {
      List<Object> decoded = (List<Object>) ((List<Object>) Msgpack.decode(
          new KvEventBatchWriter(format, 0, Map.of()).encodeBatch(CAPTURED_TS, events, groups, 128, 0))).get(1);
      if (format == KvEventFormat.MAP) {
        assertThat((Map<Object, Object>) decoded.get(0)).containsEntry("group_idx", 0L)
            .containsEntry("kv_cache_spec_kind", "full_attention").doesNotContainKey("kv_cache_spec_sliding_window");
        assertThat((Map<Object, Object>) decoded.get(1)).containsEntry("group_idx", 1L)
            .containsEntry("kv_cache_spec_kind", "sliding_window")
            .containsEntry("kv_cache_spec_sliding_window", 128L);
        assertThat((Map<Object, Object>) decoded.get(2)).containsEntry("group_idx", 1L);
      } else {
        assertThat((List<Object>) decoded.get(0)).hasSize(8); // group 0: as older vLLM sends it
        assertThat(((List<Object>) decoded.get(1)).subList(9, 12)).containsExactly(1L, "sliding_window", 128L);
        assertThat((List<Object>) decoded.get(2)).hasSize(4).last().isEqualTo(1L);
      }
    }
    // a Mamba model (Qwen3.5-like): Mamba groups first, full attention last, every event described
    List<Integer> mambaFirst = List.of(3, 0, 0);
    for (KvEventFormat format : KvEventFormat.values()) {
      List<Object> decoded = (List<Object>) ((List<Object>) Msgpack.decode(
          new KvEventBatchWriter(format, 0, Map.of()).encodeBatch(CAPTURED_TS, events, mambaFirst, 0, 3))).get(1);
      if (format == KvEventFormat.MAP) {
        assertThat((Map<Object, Object>) decoded.get(0)).containsEntry("group_idx", 3L)
            .containsEntry("kv_cache_spec_kind", "full_attention");
        assertThat((Map<Object, Object>) decoded.get(1)).containsEntry("group_idx", 0L)
            .containsEntry("kv_cache_spec_kind", "mamba").doesNotContainKey("kv_cache_spec_sliding_window");
        assertThat((Map<Object, Object>) decoded.get(2)).containsEntry("group_idx", 0L);
      } else {
        assertThat(((List<Object>) decoded.get(0)).subList(9, 12)).containsExactly(3L, "full_attention", null);
        assertThat(((List<Object>) decoded.get(1)).subList(9, 12)).containsExactly(0L, "mamba", null);
        assertThat((List<Object>) decoded.get(2)).hasSize(4).last().isEqualTo(0L);
      }
    }
  }

  @Test
  void mapFormStartsWithTheBytesVllm026Sends() {
    byte[] payload = new KvEventBatchWriter(KvEventFormat.MAP, 0, Map.of()).encodeBatch(CAPTURED_TS, capturedEvents());
    String hex = HexFormat.of().formatHex(payload);
    String expected = "93" + "cb41daa8dbe0359fe7" + "93" + "8b"
        + "a4" + ascii("type") + "ab" + ascii("BlockStored")
        + "ac" + ascii("block_hashes") + "91" + "cfdab89baa7b5857c0";
    assertThat(hex).startsWith(expected);
    assertThat(hex).endsWith("00"); // data_parallel_rank 0
  }

  @Test
  @SuppressWarnings("unchecked")
  void mapFormCarriesEveryFieldOfVllm026() {
    byte[] payload = new KvEventBatchWriter(KvEventFormat.MAP, 0, Map.of()).encodeBatch(CAPTURED_TS, capturedEvents());
    List<Object> batch = (List<Object>) Msgpack.decode(payload);
    assertThat(batch).hasSize(3);
    assertThat(batch.get(0)).isEqualTo(CAPTURED_TS);
    assertThat(batch.get(2)).isEqualTo(0L);
    List<Object> events = (List<Object>) batch.get(1);
    Map<Object, Object> stored = (Map<Object, Object>) events.get(0);
    assertThat(stored.keySet()).containsExactly("type", "block_hashes", "parent_block_hash", "token_ids",
        "block_size", "lora_id", "medium", "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind");
    assertThat(stored.get("block_hashes")).isEqualTo(List.of(new BigInteger("15760518052499183552")));
    assertThat(stored.get("parent_block_hash")).isNull();
    assertThat(((List<Object>) stored.get("token_ids")).stream().mapToLong(o -> (Long) o).toArray())
        .isEqualTo(Arrays.stream(CAPTURED_TOKENS).asLongStream().toArray());
    assertThat(stored.get("block_size")).isEqualTo(16L);
    assertThat(stored.get("medium")).isEqualTo("GPU");
    assertThat(stored.get("extra_keys")).isEqualTo(Arrays.asList((Object) null));
    assertThat(stored.get("group_idx")).isEqualTo(0L);
    assertThat(stored.get("kv_cache_spec_kind")).isEqualTo("full_attention");
    Map<Object, Object> removed = (Map<Object, Object>) events.get(1);
    assertThat(removed).containsEntry("type", "BlockRemoved").containsEntry("medium", "GPU")
        .containsEntry("group_idx", 0L);
    assertThat(events.get(2)).isEqualTo(Map.of("type", "AllBlocksCleared"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void arrayFormIsPositionalWithTheTagFirst() {
    KvEventBatchWriter encoder = new KvEventBatchWriter(KvEventFormat.ARRAY, 2, Map.of("sql-lora", 1));
    byte[] payload = encoder.encodeBatch(1.5, List.of(
        new KvEvent.BlockStored(new long[] {-2L, 7L}, 5L, new int[32], 16, "sql-lora", KvEvent.Medium.GPU, null),
        new KvEvent.BlockRemoved(new long[] {-2L}, KvEvent.Medium.GPU),
        new KvEvent.AllBlocksCleared()));
    List<Object> batch = (List<Object>) Msgpack.decode(payload);
    assertThat(batch.get(2)).isEqualTo(2L);
    List<Object> events = (List<Object>) batch.get(1);
    List<Object> stored = (List<Object>) events.get(0);
    assertThat(stored).hasSize(8);
    assertThat(stored.get(0)).isEqualTo("BlockStored");
    assertThat(stored.get(1)).isEqualTo(List.of(new BigInteger("18446744073709551614"), 7L));
    assertThat(stored.get(2)).isEqualTo(5L);
    assertThat((List<Object>) stored.get(3)).hasSize(32);
    assertThat(stored.get(4)).isEqualTo(16L);
    assertThat(stored.get(5)).isEqualTo(1L); // lora_id
    assertThat(stored.get(6)).isEqualTo("GPU");
    assertThat(stored.get(7)).isEqualTo("sql-lora");
    assertThat(events.get(1)).isEqualTo(List.of("BlockRemoved", List.of(new BigInteger("18446744073709551614")),
        "GPU"));
    assertThat(events.get(2)).isEqualTo(List.of("AllBlocksCleared"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void extraKeysCarryTheLoraOnEveryBlockAndTheSaltOnTheFirst() {
    KvEventBatchWriter encoder = new KvEventBatchWriter(KvEventFormat.MAP, 0, Map.of("a", 1));
    byte[] first = encoder.encodeBatch(1, List.of(new KvEvent.BlockStored(new long[] {1, 2}, null, new int[32], 16,
        "a", KvEvent.Medium.GPU, "tenant-x")));
    Map<Object, Object> e = (Map<Object, Object>) ((List<Object>) ((List<Object>) Msgpack.decode(first)).get(1))
        .get(0);
    assertThat(e.get("extra_keys")).isEqualTo(List.of(List.of("a", "tenant-x"), List.of("a")));
    assertThat(e.get("lora_id")).isEqualTo(1L);
    byte[] later = encoder.encodeBatch(1, List.of(new KvEvent.BlockStored(new long[] {3}, 2L, new int[16], 16, null,
        KvEvent.Medium.GPU, "tenant-x")));
    Map<Object, Object> l = (Map<Object, Object>) ((List<Object>) ((List<Object>) Msgpack.decode(later)).get(1))
        .get(0);
    assertThat(l.get("extra_keys")).isEqualTo(Arrays.asList((Object) null));
  }

  private static String ascii(String s) {
    return HexFormat.of().formatHex(s.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }
}
