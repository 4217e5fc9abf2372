package dev.kinference.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link LruKeySet} against an access-ordered {@link LinkedHashMap}: touches, evictions, expiry, resizes. */
class LruKeySetTest {

  @Test
  void matchesAnAccessOrderedMap() {
    SplittableRandom r = new SplittableRandom(5);
    int capacity = 3_000;
    LruKeySet set = new LruKeySet(capacity);
    LinkedHashMap<Long, Long> model = new LinkedHashMap<>(16, 0.75f, true);
    List<Long> evicted = new ArrayList<>();
    List<Long> expected = new ArrayList<>();
    int now = 0;
    for (int op = 0; op < 100_000; op++) {
      now += r.nextInt(3);
      long key = (r.nextInt(5_000) + 1) * 0x9E3779B97F4A7C15L;
      if (op % 5_000 == 4_999) {
        capacity = 500 + r.nextInt(4_000);
        set.capacity(capacity, evicted::add);
        evictDown(model, capacity, expected);
      } else if (op % 997 == 0) {
        int deadline = now - 50;
        set.expireBefore(deadline, deadline, evicted::add);
        for (Iterator<Long> it = model.values().iterator(); it.hasNext(); ) {
          // values are last-use times; the model's iteration order is least recent first
          long t = it.next();
          if (t - deadline >= 0) {
            break;
          }
          it.remove();
        }
        expected.clear();
        evicted.clear();
      } else {
        boolean absent = !model.containsKey(key);
        if (absent) {
          evictDown(model, capacity - 1, expected);
        }
        model.put(key, (long) now);
        assertThat(set.touch(key, now, evicted::add)).isEqualTo(absent);
      }
      if (!evicted.equals(expected) || set.size() != model.size()) {
        assertThat(evicted).isEqualTo(expected);
        assertThat(set.size()).isEqualTo(model.size());
      }
    }
    for (Long k : model.keySet()) {
      assertThat(set.contains(k)).isTrue();
    }
  }

  private static void evictDown(Map<Long, Long> model, int size, List<Long> evictedLog) {
    Iterator<Long> it = model.keySet().iterator();
    while (model.size() > size) {
      evictedLog.add(it.next());
      it.remove();
    }
  }
}
