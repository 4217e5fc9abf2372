package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** {@link LongCounts} behaves as a {@code HashMap<Long, Long>} through any mix of puts, adds and removes. */
class LongCountsProperties {

  @Property(tries = 200)
  void behavesAsAHashMap(@ForAll @Size(max = 400) List<@IntRange(min = 0, max = 80) Integer> ops) {
    LongCounts counts = new LongCounts(4);
    Map<Long, Long> model = new HashMap<>();
    for (int op : ops) {
      long key = (op % 40) * 0x1_0000_0001L; // collide in the low bits, and both signs after the spread
      if (op < 30) {
        counts.put(key, op);
        model.put(key, (long) op);
      } else if (op < 60) {
        counts.add(key, op % 2 == 0 ? 1 : -1);
        long sum = model.getOrDefault(key, 0L) + (op % 2 == 0 ? 1 : -1);
        if (sum == 0) {
          model.remove(key);
        } else {
          model.put(key, sum);
        }
      } else {
        Long expected = model.remove(key);
        assertThat(counts.remove(key)).isEqualTo(expected == null ? LongCounts.MISSING : expected);
      }
      assertThat(counts.size()).isEqualTo(model.size());
    }
    for (long k = 0; k < 40; k++) {
      long key = k * 0x1_0000_0001L;
      Long expected = model.get(key);
      assertThat(counts.get(key)).isEqualTo(expected == null ? LongCounts.MISSING : expected);
    }
  }
}
