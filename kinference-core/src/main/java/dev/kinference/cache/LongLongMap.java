package dev.kinference.cache;

/**
 * An open-addressing {@code long -> long} map without boxing, for an endpoint's engine-hash to router-key mapping.
 * Not thread-safe: the owner guards it.
 */
final class LongLongMap {

  /** Receives one entry. */
  @FunctionalInterface
  interface EntryConsumer {
    void accept(long key, long value);
  }

  private static final long EMPTY = 0;

  private long[] keys;
  private long[] values;
  private int size;
  // Key 0 is the empty marker, so a real key 0 lives here.
  private boolean hasZeroKey;
  private long zeroValue;

  LongLongMap(int expected) {
    int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
    keys = new long[cap];
    values = new long[cap];
  }

  int size() {
    return size + (hasZeroKey ? 1 : 0);
  }

  /** The value for {@code key}, or {@code missing}. */
  long get(long key, long missing) {
    if (key == EMPTY) {
      return hasZeroKey ? zeroValue : missing;
    }
    int mask = keys.length - 1;
    int i = spread(key) & mask;
    while (true) {
      long k = keys[i];
      if (k == key) {
        return values[i];
      }
      if (k == EMPTY) {
        return missing;
      }
      i = (i + 1) & mask;
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
    if ((size + 1) * 4L > keys.length * 3L) {
      resize(keys.length * 2);
    }
    int mask = keys.length - 1;
    int i = spread(key) & mask;
    while (true) {
      long k = keys[i];
      if (k == key) {
        long old = values[i];
        values[i] = value;
        return old;
      }
      if (k == EMPTY) {
        keys[i] = key;
        values[i] = value;
        size++;
        return missing;
      }
      i = (i + 1) & mask;
    }
  }

  /** Removes {@code key}; returns its value or {@code missing}. */
  long remove(long key, long missing) {
    if (key == EMPTY) {
      long old = hasZeroKey ? zeroValue : missing;
      hasZeroKey = false;
      return old;
    }
    int mask = keys.length - 1;
    int i = spread(key) & mask;
    while (true) {
      long k = keys[i];
      if (k == EMPTY) {
        return missing;
      }
      if (k == key) {
        long old = values[i];
        deleteAt(i);
        size--;
        return old;
      }
      i = (i + 1) & mask;
    }
  }

  /** Calls {@code action(key, value)} for every entry; the action must not modify this map. */
  void forEach(EntryConsumer action) {
    if (hasZeroKey) {
      action.accept(EMPTY, zeroValue);
    }
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != EMPTY) {
        action.accept(keys[i], values[i]);
      }
    }
  }

  void clear() {
    keys = new long[16];
    values = new long[16];
    size = 0;
    hasZeroKey = false;
  }

  long arrayBytes() {
    return 16L * keys.length;
  }

  private void deleteAt(int hole) {
    int mask = keys.length - 1;
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      long k = keys[i];
      if (k == EMPTY) {
        break;
      }
      int home = spread(k) & mask;
      boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
      if (movable) {
        keys[hole] = k;
        values[hole] = values[i];
        hole = i;
      }
    }
    keys[hole] = EMPTY;
    values[hole] = 0;
  }

  private void resize(int capacity) {
    long[] oldKeys = keys;
    long[] oldValues = values;
    keys = new long[capacity];
    values = new long[capacity];
    int mask = capacity - 1;
    for (int j = 0; j < oldKeys.length; j++) {
      long k = oldKeys[j];
      if (k != EMPTY) {
        int i = spread(k) & mask;
        while (keys[i] != EMPTY) {
          i = (i + 1) & mask;
        }
        keys[i] = k;
        values[i] = oldValues[j];
      }
    }
  }

  /** Engine hashes may be sequential or low-entropy in their low bits; mix before masking. */
  private static int spread(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }
}
