package dev.kinference.cache;

/**
 * An open-addressing map from {@code long} to {@code long} (linear probing, backward-shift deletion), so that the
 * KV-cache groups of hybrid models ({@link HybridGroups}) are tracked without boxing: lookups probe it once per
 * prompt block. Hand-written rather than a dependency: the index's other tables are specialised ones
 * ({@link EngineBlockMap}, {@link BlockTable}), and this map's three operations fit in a page.
 * Not thread-safe.
 */
final class LongCounts {

  static final long MISSING = Long.MIN_VALUE;

  private long[] keys;
  private long[] values;
  private boolean[] used;
  private int size;
  private int mask;

  LongCounts(int capacity) {
    int n = Integer.highestOneBit(Math.max(8, capacity) * 2 - 1);
    keys = new long[n];
    values = new long[n];
    used = new boolean[n];
    mask = n - 1;
  }

  int size() {
    return size;
  }

  /** The value of {@code key}, or {@link #MISSING}. */
  long get(long key) {
    for (int i = slot(key); used[i]; i = (i + 1) & mask) {
      if (keys[i] == key) {
        return values[i];
      }
    }
    return MISSING;
  }

  void put(long key, long value) {
    int i = slot(key);
    for (; used[i]; i = (i + 1) & mask) {
      if (keys[i] == key) {
        values[i] = value;
        return;
      }
    }
    used[i] = true;
    keys[i] = key;
    values[i] = value;
    if (++size * 2 > keys.length) {
      grow();
    }
  }

  /** Adds {@code delta} to the value of {@code key} (0 when absent); removes the key when the sum is 0. */
  void add(long key, long delta) {
    long v = get(key);
    long sum = (v == MISSING ? 0 : v) + delta;
    if (sum == 0) {
      remove(key);
    } else {
      put(key, sum);
    }
  }

  /** Removes {@code key}; returns its value, or {@link #MISSING}. */
  long remove(long key) {
    int i = slot(key);
    for (; used[i]; i = (i + 1) & mask) {
      if (keys[i] == key) {
        long v = values[i];
        shiftBack(i);
        size--;
        return v;
      }
    }
    return MISSING;
  }

  void clear() {
    java.util.Arrays.fill(used, false);
    size = 0;
  }

  private void shiftBack(int hole) {
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      if (!used[i]) {
        break;
      }
      int home = slot(keys[i]);
      // move the entry into the hole when its home is not between the hole and it (cyclically)
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        keys[hole] = keys[i];
        values[hole] = values[i];
        hole = i;
      }
    }
    used[hole] = false;
  }

  private void grow() {
    long[] oldKeys = keys;
    long[] oldValues = values;
    boolean[] oldUsed = used;
    keys = new long[oldKeys.length * 2];
    values = new long[oldKeys.length * 2];
    used = new boolean[oldKeys.length * 2];
    mask = keys.length - 1;
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldUsed[i]) {
        put(oldKeys[i], oldValues[i]);
      }
    }
  }

  private int slot(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }
}
