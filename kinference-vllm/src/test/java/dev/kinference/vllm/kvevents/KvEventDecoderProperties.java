package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.testkit.vllm.KvEventEncoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

class KvEventDecoderProperties {

  /** Whatever the bytes, the decoder returns a batch or throws its own exception: never another one, never hangs. */
  @Property(tries = 2000)
  void garbageNeverEscapesAsAnotherException(@ForAll @Size(max = 64) byte[] bytes) {
    KvEventDecoder decoder = new KvEventDecoder();
    try {
      decoder.decode(bytes);
    } catch (KvEventFormatException expected) {
      assertThat(expected.getMessage()).isNotBlank();
    }
  }

  /** Flipping any byte of a valid payload yields a batch or a format exception, never another failure. */
  @Property(tries = 300)
  void corruptedPayloadsAreRejectedOrDecoded(@ForAll long seed) {
    Random random = new Random(seed);
    List<KvEvent> events = randomEvents(random);
    KvEventEncoder.Layout layout = random.nextBoolean() ? KvEventEncoder.Layout.MAP : KvEventEncoder.Layout.ARRAY;
    byte[] bytes = KvEventEncoder.of(layout).encode(random.nextDouble(), events, random.nextInt(3) - 1);
    assertThat(new KvEventDecoder().decode(bytes).events()).isEqualTo(events);
    bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
    try {
      new KvEventDecoder().decode(bytes);
    } catch (KvEventFormatException expected) {
      assertThat(expected.getMessage()).isNotBlank();
    }
  }

  static List<KvEvent> randomEvents(Random random) {
    List<KvEvent> events = new ArrayList<>();
    int n = 1 + random.nextInt(5);
    for (int i = 0; i < n; i++) {
      int kind = random.nextInt(5);
      long[] hashes = random.longs(1 + random.nextInt(4)).toArray();
      if (kind <= 2) {
        int blockSize = 1 + random.nextInt(4);
        int[] tokens = random.ints(hashes.length * blockSize, 0, 200_000).toArray();
        events.add(new KvEvent.BlockStored(hashes, random.nextBoolean() ? null : random.nextLong(), tokens,
            blockSize, random.nextBoolean() ? null : "lora" + random.nextInt(3),
            random.nextBoolean() ? KvEvent.Medium.GPU : KvEvent.Medium.CPU, null));
      } else if (kind == 3) {
        events.add(new KvEvent.BlockRemoved(hashes, KvEvent.Medium.GPU));
      } else {
        events.add(new KvEvent.AllBlocksCleared());
      }
    }
    return events;
  }
}
