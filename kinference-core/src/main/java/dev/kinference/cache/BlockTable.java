package dev.kinference.cache;

import dev.kinference.prompt.PrefixKeys;
import java.util.concurrent.locks.StampedLock;

/**
 * Router block key -> set of endpoint slots holding it: the shared structure of both cache indexes.
 *
 * <p>64 segments, chosen by the key's top bits; each an open-addressing table with linear probing over a
 * {@code long[]} of keys and a {@code long[]} of slot bitsets ({@code words} longs per entry). Key 0 marks an empty
 * entry ({@link dev.kinference.prompt.BlockKeys} never produces it).
 *
 * <p>Thread-safety: writers take their segment's write lock; {@link #walk} reads optimistically and revalidates,
 * falling back to the segment read lock, so readers never see a torn entry and never block each other.
 */
final class BlockTable {

  private static final int SEGMENT_SHIFT = 58;
  private static final int SEGMENTS = 1 << (64 - SEGMENT_SHIFT);
  private static final int MIN_CAPACITY = 64;

  /** Immutable shape of a segment's arrays; replaced whole on resize so readers see a consistent pair. */
  private static final class Tab {
    final long[] keys;
    final long[] masks;
    final int words;
    final int capacityMask;

    Tab(int capacity, int words) {
      this.keys = new long[capacity];
      this.masks = new long[capacity * words];
      this.words = words;
      this.capacityMask = capacity - 1;
    }
  }

  private static final class Segment {
    final StampedLock lock = new StampedLock();
    volatile Tab tab = new Tab(MIN_CAPACITY, 1);
    int size; // guarded by lock (write)
  }

  private final Segment[] segments = new Segment[SEGMENTS];

  BlockTable() {
    for (int i = 0; i < SEGMENTS; i++) {
      segments[i] = new Segment();
    }
  }

  private static Segment segmentFor(Segment[] segments, long key) {
    return segments[(int) (key >>> SEGMENT_SHIFT)];
  }

  /** Adds {@code slot} to the holders of {@code key}; returns true if it was not there. */
  boolean add(long key, int slot) {
    Segment seg = segmentFor(segments, key);
    long stamp = seg.lock.writeLock();
    try {
      Tab t = seg.tab;
      int word = slot >>> 6;
      if (word >= t.words) {
        t = rebuild(seg, t.keys.length, word + 1);
      }
      int i = find(t, key);
      if (i < 0) {
        if ((seg.size + 1) * 4L > t.keys.length * 3L) {
          t = rebuild(seg, t.keys.length * 2, t.words);
        }
        i = insertionPoint(t, key);
        t.keys[i] = key;
        seg.size++;
      }
      int m = i * t.words + word;
      long bit = 1L << slot;
      boolean added = (t.masks[m] & bit) == 0;
      t.masks[m] |= bit;
      return added;
    } finally {
      seg.lock.unlockWrite(stamp);
    }
  }

  /** Removes {@code slot} from the holders of {@code key}; returns true if it was there. */
  boolean remove(long key, int slot) {
    Segment seg = segmentFor(segments, key);
    long stamp = seg.lock.writeLock();
    try {
      Tab t = seg.tab;
      int word = slot >>> 6;
      if (word >= t.words) {
        return false;
      }
      int i = find(t, key);
      if (i < 0) {
        return false;
      }
      int m = i * t.words + word;
      long bit = 1L << slot;
      if ((t.masks[m] & bit) == 0) {
        return false;
      }
      t.masks[m] &= ~bit;
      if (isEmpty(t, i)) {
        delete(t, i);
        seg.size--;
      }
      return true;
    } finally {
      seg.lock.unlockWrite(stamp);
    }
  }

  /** Whether {@code slot} holds {@code key}. */
  boolean contains(long key, int slot) {
    Segment seg = segmentFor(segments, key);
    long stamp = seg.lock.readLock();
    try {
      Tab t = seg.tab;
      int word = slot >>> 6;
      int i = find(t, key);
      return i >= 0 && word < t.words && (t.masks[i * t.words + word] & (1L << slot)) != 0;
    } finally {
      seg.lock.unlockRead(stamp);
    }
  }

  /** Removes {@code slot} from every entry: O(table size), for a server restart or an endpoint that left. */
  void clearSlot(int slot) {
    int word = slot >>> 6;
    long keep = ~(1L << slot);
    for (Segment seg : segments) {
      long stamp = seg.lock.writeLock();
      try {
        Tab t = seg.tab;
        if (word >= t.words) {
          continue;
        }
        boolean emptied = false;
        for (int i = 0; i < t.keys.length; i++) {
          if (t.keys[i] != 0) {
            t.masks[i * t.words + word] &= keep;
            emptied |= isEmpty(t, i);
          }
        }
        if (emptied) {
          rebuild(seg, t.keys.length, t.words);
        }
      } finally {
        seg.lock.unlockWrite(stamp);
      }
    }
  }

  /** Number of distinct keys. */
  long keyCount() {
    long n = 0;
    for (Segment seg : segments) {
      long stamp = seg.lock.readLock();
      try {
        n += seg.size;
      } finally {
        seg.lock.unlockRead(stamp);
      }
    }
    return n;
  }

  /** Bytes held by the arrays (excluding object headers): for memory reporting. */
  long arrayBytes() {
    long n = 0;
    for (Segment seg : segments) {
      Tab t = seg.tab;
      n += 8L * t.keys.length + 8L * t.masks.length;
    }
    return n;
  }

  /**
   * For each candidate, the number of leading keys of {@code keys} it holds.
   *
   * @param active bitset of candidate slots ({@code active.length} words); cleared by this call
   * @param held scratch of at least {@code active.length} words
   * @param depthBySlot receives, for every slot set in {@code active}, its matched depth
   */
  void walk(PrefixKeys keys, long[] active, long[] held, int[] depthBySlot) {
    int words = active.length;
    if (words == 1) {
      walk1(keys, active, depthBySlot);
      return;
    }
    int keyCount = keys.size();
    for (int b = 0; b < keyCount; b++) {
      long key = keys.key(b);
      Segment seg = segmentFor(segments, key);
      long stamp = seg.lock.tryOptimisticRead();
      readHeld(seg.tab, key, held, words);
      if (!seg.lock.validate(stamp)) {
        stamp = seg.lock.readLock();
        try {
          readHeld(seg.tab, key, held, words);
        } finally {
          seg.lock.unlockRead(stamp);
        }
      }
      long any = 0;
      for (int w = 0; w < words; w++) {
        long still = active[w] & held[w];
        long gone = active[w] & ~still;
        while (gone != 0) {
          depthBySlot[(w << 6) + Long.numberOfTrailingZeros(gone)] = b;
          gone &= gone - 1;
        }
        active[w] = still;
        any |= still;
      }
      if (any == 0) {
        return;
      }
    }
    for (int w = 0; w < words; w++) {
      long rest = active[w];
      while (rest != 0) {
        depthBySlot[(w << 6) + Long.numberOfTrailingZeros(rest)] = keyCount;
        rest &= rest - 1;
      }
      active[w] = 0;
    }
  }

  /** Copies the holders of {@code key} into {@code held[0, words)}; a torn read is caught by the caller. */
  private static void readHeld(Tab t, long key, long[] held, int words) {
    int i = findBounded(t, key);
    for (int w = 0; w < words; w++) {
      held[w] = i >= 0 && w < t.words ? t.masks[i * t.words + w] : 0;
    }
  }

  private void walk1(PrefixKeys keys, long[] active, int[] depthBySlot) {
    int keyCount = keys.size();
    long act = active[0];
    int b = 0;
    for (; b < keyCount && act != 0; b++) {
      long key = keys.key(b);
      Segment seg = segmentFor(segments, key);
      long stamp = seg.lock.tryOptimisticRead();
      long held = held1(seg.tab, key);
      if (!seg.lock.validate(stamp)) {
        stamp = seg.lock.readLock();
        try {
          held = held1(seg.tab, key);
        } finally {
          seg.lock.unlockRead(stamp);
        }
      }
      long still = act & held;
      long gone = act & ~still;
      while (gone != 0) {
        depthBySlot[Long.numberOfTrailingZeros(gone)] = b;
        gone &= gone - 1;
      }
      act = still;
    }
    while (act != 0) {
      depthBySlot[Long.numberOfTrailingZeros(act)] = keyCount;
      act &= act - 1;
    }
    active[0] = 0;
  }

  /** Word 0 of the holders of {@code key}, or 0; bounded so a racing writer cannot trap the reader. */
  private static long held1(Tab t, long key) {
    long[] ks = t.keys;
    int mask = t.capacityMask;
    int i = (int) key & mask;
    for (int probes = 0; probes <= mask; probes++) {
      long k = ks[i];
      if (k == key) {
        return t.masks[i * t.words];
      }
      if (k == 0) {
        return 0;
      }
      i = (i + 1) & mask;
    }
    return 0;
  }

  private static int findBounded(Tab t, long key) {
    long[] ks = t.keys;
    int mask = t.capacityMask;
    int i = (int) key & mask;
    for (int probes = 0; probes <= mask; probes++) {
      long k = ks[i];
      if (k == key) {
        return i;
      }
      if (k == 0) {
        return -1;
      }
      i = (i + 1) & mask;
    }
    return -1;
  }

  private static int find(Tab t, long key) {
    return findBounded(t, key);
  }

  private static int insertionPoint(Tab t, long key) {
    int mask = t.capacityMask;
    int i = (int) key & mask;
    while (t.keys[i] != 0) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private static boolean isEmpty(Tab t, int i) {
    int base = i * t.words;
    for (int w = 0; w < t.words; w++) {
      if (t.masks[base + w] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Backward-shift deletion keeps probe chains intact without tombstones. */
  private static void delete(Tab t, int hole) {
    int mask = t.capacityMask;
    int words = t.words;
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      long k = t.keys[i];
      if (k == 0) {
        break;
      }
      int home = (int) k & mask;
      // Move k into the hole if its home is not cyclically within (hole, i].
      boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
      if (movable) {
        t.keys[hole] = k;
        System.arraycopy(t.masks, i * words, t.masks, hole * words, words);
        hole = i;
      }
    }
    t.keys[hole] = 0;
    for (int w = 0; w < words; w++) {
      t.masks[hole * words + w] = 0;
    }
  }

  /** Copies live entries into new arrays; caller holds the write lock. */
  private static Tab rebuild(Segment seg, int capacity, int words) {
    Tab old = seg.tab;
    int live = 0;
    for (int i = 0; i < old.keys.length; i++) {
      if (old.keys[i] != 0 && !isEmpty(old, i)) {
        live++;
      }
    }
    int cap = Math.max(MIN_CAPACITY, capacity);
    while (live * 4L > cap * 3L) {
      cap <<= 1;
    }
    Tab t = new Tab(cap, words);
    int copyWords = Math.min(words, old.words);
    for (int i = 0; i < old.keys.length; i++) {
      long k = old.keys[i];
      if (k != 0 && !isEmpty(old, i)) {
        int j = insertionPoint(t, k);
        t.keys[j] = k;
        System.arraycopy(old.masks, i * old.words, t.masks, j * words, copyWords);
      }
    }
    seg.size = live;
    seg.tab = t;
    return t;
  }
}
