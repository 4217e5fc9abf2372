package dev.kinference.cache;

/**
 * An open-addressing {@code long -> long} map without boxing, for an endpoint's engine-hash to router-key mapping.
 * Keys and values interleave in one array, so a probe touches one cache line. A key's home entry is its mixed hash
 * scaled to the capacity, so capacities need not be powers of two: the map grows by half when three quarters full,
 * keeping its array between 21 and 32 bytes per entry while it grows. Not thread-safe: the owner guards it.
 */
final class LongLongMap {

  /** Receives one entry. */
  @FunctionalInterface
  interface EntryConsumer {
    void accept(long key, long value);
  }

  private static final long EMPTY = 0;
  private static final int MIN_CAPACITY = 16;

  /** {@code [key, value]} pairs; key 0 marks an empty entry. */
  private long[] entries;
  private int capacity;
  private int size;
  // Key 0 is the empty marker, so a real key 0 lives here.
  private boolean hasZeroKey;
  private long zeroValue;

  LongLongMap(int expected) {
    capacity = Math.max(MIN_CAPACITY, (int) Math.min(1 << 29, expected * 4L / 3 + 1));
    entries = new long[2 * capacity];
  }

  int size() {
    return size + (hasZeroKey ? 1 : 0);
  }

  /**
   * Reads the home entries of {@code keys[0, count)}, so that the gets, puts and removes that follow find them in
   * cache (the reads overlap; see {@link BlockTable#touch}). Returns a value the caller must keep.
   */
  long touch(long[] keys, int count) {
    long[] e = entries;
    int cap = capacity;
    long sink = 0;
    for (int i = 0; i < count; i++) {
      sink ^= e[2 * home(keys[i], cap)];
    }
    return sink;
  }

  /** The value for {@code key}, or {@code missing}. */
  long get(long key, long missing) {
    if (key == EMPTY) {
      return hasZeroKey ? zeroValue : missing;
    }
    long[] e = entries;
    int cap = capacity;
    int i = home(key, cap);
    while (true) {
      long k = e[2 * i];
      if (k == key) {
        return e[2 * i + 1];
      }
      if (k == EMPTY) {
        return missing;
      }
      i = i + 1 == cap ? 0 : i + 1;
    }
  }

  /** Associates {@code value} with {@code key}; returns the previous value or {@code missing}. */
  long put(long key, long value, long missing) {
    if (key == EMPTY) {
      long old = hasZeroKey ? zeroValue : missing;
      hasZeroKey = true;
      zeroValue = value;
      return old;
    }
    if ((size + 1) * 4L > capacity * 3L) {
      resize(capacity + (capacity >>> 1));
    }
    long[] e = entries;
    int cap = capacity;
    int i = home(key, cap);
    while (true) {
      long k = e[2 * i];
      if (k == key) {
        long old = e[2 * i + 1];
        e[2 * i + 1] = value;
        return old;
      }
      if (k == EMPTY) {
        e[2 * i] = key;
        e[2 * i + 1] = value;
        size++;
        return missing;
      }
      i = i + 1 == cap ? 0 : i + 1;
    }
  }

  /** Removes {@code key}; returns its value or {@code missing}. */
  long remove(long key, long missing) {
    if (key == EMPTY) {
      long old = hasZeroKey ? zeroValue : missing;
      hasZeroKey = false;
      return old;
    }
    long[] e = entries;
    int cap = capacity;
    int i = home(key, cap);
    while (true) {
      long k = e[2 * i];
      if (k == EMPTY) {
        return missing;
      }
      if (k == key) {
        long old = e[2 * i + 1];
        deleteAt(i);
        size--;
        if (capacity > MIN_CAPACITY && size * 4L < capacity) {
          resize(Math.max(MIN_CAPACITY, size * 2));
        }
        return old;
      }
      i = i + 1 == cap ? 0 : i + 1;
    }
  }

  /** Calls {@code action(key, value)} for every entry; the action must not modify this map. */
  void forEach(EntryConsumer action) {
    if (hasZeroKey) {
      action.accept(EMPTY, zeroValue);
    }
    long[] e = entries;
    for (int i = 0; i < capacity; i++) {
      if (e[2 * i] != EMPTY) {
        action.accept(e[2 * i], e[2 * i + 1]);
      }
    }
  }

  void clear() {
    capacity = MIN_CAPACITY;
    entries = new long[2 * capacity];
    size = 0;
    hasZeroKey = false;
  }

  long arrayBytes() {
    return 8L * entries.length;
  }

  private void deleteAt(int hole) {
    long[] e = entries;
    int cap = capacity;
    int i = hole;
    while (true) {
      i = i + 1 == cap ? 0 : i + 1;
      long k = e[2 * i];
      if (k == EMPTY) {
        break;
      }
      int home = home(k, cap);
      int fromHome = i >= home ? i - home : i + cap - home;
      int fromHole = i >= hole ? i - hole : i + cap - hole;
      // k may move back into the hole if the hole lies on its probe path from its home.
      if (fromHole <= fromHome) {
        e[2 * hole] = k;
        e[2 * hole + 1] = e[2 * i + 1];
        hole = i;
      }
    }
    e[2 * hole] = EMPTY;
    e[2 * hole + 1] = 0;
  }

  private void resize(int newCapacity) {
    long[] old = entries;
    int oldCapacity = capacity;
    int cap = newCapacity;
    long[] e = new long[2 * cap];
    for (int j = 0; j < oldCapacity; j++) {
      long k = old[2 * j];
      if (k != EMPTY) {
        int i = home(k, cap);
        while (e[2 * i] != EMPTY) {
          i = i + 1 == cap ? 0 : i + 1;
        }
        e[2 * i] = k;
        e[2 * i + 1] = old[2 * j + 1];
      }
    }
    entries = e;
    capacity = cap;
  }

  /** Engine hashes may be sequential or low-entropy: mix, then scale the high 32 bits to the capacity. */
  private static int home(long key, int capacity) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (((h >>> 32) * capacity) >>> 32);
  }
}
