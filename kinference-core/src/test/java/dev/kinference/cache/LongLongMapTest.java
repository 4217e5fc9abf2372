package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link LongLongMap} against {@link HashMap}: random puts, gets and removes, through growth and shrinking. */
class LongLongMapTest {

  private static final long MISSING = Long.MIN_VALUE;

  @Test
  void matchesAHashMapUnderRandomOperations() {
    SplittableRandom r = new SplittableRandom(3);
    LongLongMap map = new LongLongMap(4);
    Map<Long, Long> model = new HashMap<>();
    for (int op = 0; op < 200_000; op++) {
      // Sequential-ish keys (as some engines hash), including 0, within a range that makes ops collide.
      long k = op < 100_000 ? r.nextInt(20_000) : r.nextInt(500);
      long v = r.nextLong();
      int what = r.nextInt(3);
      switch (what) {
        case 0 -> assertThat(map.put(k, v, MISSING)).isEqualTo(model.getOrDefault(k, MISSING));
        case 1 -> assertThat(map.remove(k, MISSING)).isEqualTo(model.getOrDefault(k, MISSING));
        default -> assertThat(map.get(k, MISSING)).isEqualTo(model.getOrDefault(k, MISSING));
      }
      if (what == 0) {
        model.put(k, v);
      } else if (what == 1) {
        model.remove(k);
      }
      if (op % 256 == 0) {
        assertThat(map.size()).isEqualTo(model.size());
      }
    }
    assertThat(map.size()).isEqualTo(model.size());
    Map<Long, Long> seen = new HashMap<>();
    map.forEach(seen::put);
    assertThat(seen).isEqualTo(model);
  }

  @Test
  void staysCompactAsItGrowsAndShrinks() {
    LongLongMap map = new LongLongMap(16);
    for (long k = 1; k <= 1_000_000; k++) {
      map.put(k * 31, k, MISSING);
      if (k >= 1_000 && k % 997 == 0) {
        // between 16 / 0.75 and 16 / 0.5 bytes per entry, whatever the size
        assertThat(map.arrayBytes() / (double) map.size()).isBetween(21.0, 32.1);
      }
    }
    for (long k = 1; k <= 990_000; k++) {
      map.remove(k * 31, MISSING);
    }
    assertThat(map.size()).isEqualTo(10_000);
    assertThat(map.arrayBytes() / (double) map.size()).isLessThanOrEqualTo(16 * 4.0);
    assertThat(map.get(999_999L * 31, MISSING)).isEqualTo(999_999L);
  }
}
