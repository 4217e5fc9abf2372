package dev.kinference.cache;

import java.util.Arrays;

/**
 * One {@link BlockTable} segment's entries: an open-addressing table with linear probing over a single
 * {@code long[]}, each entry a router key followed by its holder word ({@link HolderSets}), so a probe touches one
 * cache line. Key 0 marks an empty entry ({@link dev.kinference.prompt.BlockKeys} never produces it); a holder word
 * of 0 is an entry whose last holder left, dropped at the next {@link #rebuiltFrom}. A key's home entry is its low
 * 32 bits scaled to the capacity, so capacities need not be powers of two and may grow by a quarter.
 *
 * <p>The shape is immutable (final fields, so a reader may share it through a race) and replaced whole when the
 * segment resizes; the entries change in place. Thread-safety: the owning {@link BlockTable} serialises writers per
 * segment and validates readers with the segment's version; {@link #find} is bounded, so a racing writer cannot trap
 * an optimistic reader.
 */
final class SegmentTable {

  /** Longs per entry: the key, then its holder word. */
  static final int STRIDE = 2;
  static final int MIN_CAPACITY = 64;

  final long[] slots;
  final int capacity;

  SegmentTable(int capacity) {
    this.capacity = capacity;
    this.slots = new long[capacity * STRIDE];
  }

  /** The home entry of {@code key} in a table of {@code capacity} entries. */
  static int home(long key, int capacity) {
    return (int) (((key & 0xFFFF_FFFFL) * capacity) >>> 32);
  }

  /** The key stored at {@code key}'s home entry (0 if none): one load, to warm the entry's cache line. */
  long homeKey(long key) {
    return slots[home(key, capacity) * STRIDE];
  }

  /** The entry index of {@code key}, or -1; bounded, so a racing writer cannot trap an optimistic reader. */
  int find(long key) {
    long[] s = slots;
    int cap = capacity;
    int i = home(key, cap);
    for (int probes = 0; probes < cap; probes++) {
      long k = s[i * STRIDE];
      if (k == key) {
        return i;
      }
      if (k == 0) {
        return -1;
      }
      i = i + 1 == cap ? 0 : i + 1;
    }
    return -1;
  }

  /** The holder word of {@code key}, or 0 (the empty set) when it is absent. */
  long holdersOf(long key) {
    int i = find(key);
    return i < 0 ? 0 : slots[i * STRIDE + 1];
  }

  /** The first free entry on {@code key}'s probe path; the table must have one (its load is bounded). */
  int insertionPoint(long key) {
    int cap = capacity;
    int i = home(key, cap);
    while (slots[i * STRIDE] != 0) {
      i = i + 1 == cap ? 0 : i + 1;
    }
    return i;
  }

  long keyAt(int i) {
    return slots[i * STRIDE];
  }

  long holdersAt(int i) {
    return slots[i * STRIDE + 1];
  }

  void setKey(int i, long key) {
    slots[i * STRIDE] = key;
  }

  void setHolders(int i, long holders) {
    slots[i * STRIDE + 1] = holders;
  }

  /** Whether entry {@code i} is in use and still has holders. */
  boolean isLive(int i) {
    return slots[i * STRIDE] != 0 && slots[i * STRIDE + 1] != 0;
  }

  /** Empties entry {@code hole}; backward-shift deletion keeps probe chains intact without tombstones. */
  void delete(int hole) {
    int cap = capacity;
    long[] s = slots;
    int i = hole;
    while (true) {
      i = i + 1 == cap ? 0 : i + 1;
      long k = s[i * STRIDE];
      if (k == 0) {
        break;
      }
      int home = home(k, cap);
      int fromHome = i >= home ? i - home : i + cap - home;
      int fromHole = i >= hole ? i - hole : i + cap - hole;
      // k may move back into the hole if the hole lies on its probe path from its home.
      if (fromHole <= fromHome) {
        System.arraycopy(s, i * STRIDE, s, hole * STRIDE, STRIDE);
        hole = i;
      }
    }
    Arrays.fill(s, hole * STRIDE, hole * STRIDE + STRIDE, 0L);
  }

  /** Entries in use with holders. */
  int liveCount() {
    int live = 0;
    for (int i = 0; i < capacity; i++) {
      if (isLive(i)) {
        live++;
      }
    }
    return live;
  }

  /**
   * A quarter more: the probe lengths are bounded by the three-quarters load as before, and a growth leaves half the
   * slack that growing by half left (16 bytes per key at 60-75% load: 21 to 27 bytes per key instead of 21 to 32),
   * for twice the copying, which only writers pay.
   */
  static int grown(int capacity) {
    return capacity + Math.max(1, capacity >>> 2);
  }

  /**
   * A new table of at least {@code capacity} entries (more if the live entries would fill it past three quarters)
   * holding {@code old}'s live entries; their holder words move as they are, arrays and all.
   */
  static SegmentTable rebuiltFrom(SegmentTable old, int capacity, int live) {
    int cap = Math.max(MIN_CAPACITY, capacity);
    while (live * 4L > cap * 3L) {
      cap = grown(cap);
    }
    SegmentTable t = new SegmentTable(cap);
    for (int i = 0; i < old.capacity; i++) {
      if (old.isLive(i)) {
        int j = t.insertionPoint(old.keyAt(i));
        t.setKey(j, old.keyAt(i));
        t.setHolders(j, old.holdersAt(i));
      }
    }
    return t;
  }
}
