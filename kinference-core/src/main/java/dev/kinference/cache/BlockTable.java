package dev.kinference.cache;

import dev.kinference.prompt.PrefixKeys;
import java.util.concurrent.locks.StampedLock;

/**
 * Router block key -> set of endpoint slots holding it: the shared structure of both cache indexes.
 *
 * <p>64 segments, chosen by the key's top six bits; each an open-addressing table with linear probing over a single
 * {@code long[]} of entries, each entry a key followed by its slot bitset ({@code words} longs), so a probe touches
 * one cache line. Key 0 marks an empty entry ({@link dev.kinference.prompt.BlockKeys} never produces it). A key's
 * home entry is its low 32 bits scaled to the capacity, so capacities need not be powers of two: a segment grows by
 * half when three quarters full and shrinks when less than a quarter full, keeping its arrays between 1.33 and
 * about 4 entries' worth per key (between 1.33 and 2 while it grows).
 *
 * <p>A {@link #walk} looks up a prompt's keys in chunks: it first loads every chunk key's home entry, independent
 * loads the processor overlaps, then resolves them in order. On a table larger than the caches this turns one
 * memory latency per block into about one per chunk.
 *
 * <p>Thread-safety: writers take their segment's write lock; {@link #walk} reads optimistically and revalidates,
 * falling back to the segment read lock, so readers never see a torn entry and never block each other.
 */
final class BlockTable {

  private static final int SEGMENT_SHIFT = 58;
  private static final int SEGMENTS = 1 << (64 - SEGMENT_SHIFT);
  private static final int MIN_CAPACITY = 64;
  /** Keys resolved per chunk of a walk, at most; the first chunks are smaller, so an early miss costs little. */
  static final int MAX_CHUNK = 16;
  private static final int FIRST_CHUNK = 4;

  /** Immutable shape of a segment's array; replaced whole on resize so readers see a consistent table. */
  private static final class Tab {
    final long[] slots;
    final int capacity;
    final int words;
    final int stride;

    Tab(int capacity, int words) {
      this.capacity = capacity;
      this.words = words;
      this.stride = words + 1;
      this.slots = new long[capacity * stride];
    }
  }

  private static final class Segment {
    final StampedLock lock = new StampedLock();
    volatile Tab tab = new Tab(MIN_CAPACITY, 1);
    int size; // guarded by lock (write)
  }

  /** Per-walk scratch of {@link #MAX_CHUNK} entries; one per thread, owned by the caller. */
  static final class WalkScratch {
    final long[] stamps = new long[MAX_CHUNK];
    final long[] firstKeys = new long[MAX_CHUNK];
    final long[] firstWords = new long[MAX_CHUNK];
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

  /** The home entry of {@code key} in a table of {@code capacity} entries. */
  private static int home(long key, int capacity) {
    return (int) (((key & 0xFFFF_FFFFL) * capacity) >>> 32);
  }

  /**
   * Reads the home entries of {@code keys[0, count)} without locking, so that a batch of writes that follows finds
   * them in cache: the reads are independent and overlap, where each write (it takes a lock) would wait for its own.
   * Returns a value the caller must keep (in a field), so the reads are not optimised away.
   */
  long touch(long[] keys, int count) {
    Segment[] segs = segments;
    long sink = 0;
    for (int i = 0; i < count; i++) {
      long key = keys[i];
      Tab t = segmentFor(segs, key).tab;
      sink ^= t.slots[home(key, t.capacity) * t.stride];
    }
    return sink;
  }

  /** Adds {@code slot} to the holders of {@code key}; returns true if it was not there. */
  boolean add(long key, int slot) {
    Segment seg = segmentFor(segments, key);
    long stamp = seg.lock.writeLock();
    try {
      Tab t = seg.tab;
      int word = slot >>> 6;
      if (word >= t.words) {
        t = rebuild(seg, t.capacity, word + 1);
      }
      int i = find(t, key);
      if (i < 0) {
        if ((seg.size + 1) * 4L > t.capacity * 3L) {
          t = rebuild(seg, grown(t.capacity), t.words);
        }
        i = insertionPoint(t, key);
        t.slots[i * t.stride] = key;
        seg.size++;
      }
      int m = i * t.stride + 1 + word;
      long bit = 1L << slot;
      boolean added = (t.slots[m] & bit) == 0;
      t.slots[m] |= bit;
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
      int m = i * t.stride + 1 + word;
      long bit = 1L << slot;
      if ((t.slots[m] & bit) == 0) {
        return false;
      }
      t.slots[m] &= ~bit;
      if (isEmpty(t, i)) {
        delete(t, i);
        seg.size--;
        if (t.capacity > MIN_CAPACITY && seg.size * 4L < t.capacity) {
          rebuild(seg, seg.size * 2, t.words);
        }
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
      return i >= 0 && word < t.words && (t.slots[i * t.stride + 1 + word] & (1L << slot)) != 0;
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
        for (int i = 0; i < t.capacity; i++) {
          int base = i * t.stride;
          if (t.slots[base] != 0) {
            t.slots[base + 1 + word] &= keep;
            emptied |= isEmpty(t, i);
          }
        }
        if (emptied) {
          rebuild(seg, t.capacity, t.words);
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
      n += 8L * seg.tab.slots.length;
    }
    return n;
  }

  /**
   * For each candidate, the number of leading keys of {@code keys} it holds.
   *
   * @param active bitset of candidate slots ({@code active.length} words); cleared by this call
   * @param held scratch of at least {@code active.length} words
   * @param depthBySlot receives, for every slot set in {@code active}, its matched depth
   * @param scratch this thread's chunk scratch
   */
  void walk(PrefixKeys keys, long[] active, long[] held, int[] depthBySlot, WalkScratch scratch) {
    int words = active.length;
    int keyCount = keys.size();
    Segment[] segs = segments;
    long[] stamps = scratch.stamps;
    long[] firstKeys = scratch.firstKeys;
    long[] firstWords = scratch.firstWords;
    long act = words == 1 ? active[0] : anyOf(active, words);
    int b = 0;
    int chunk = FIRST_CHUNK;
    while (b < keyCount && act != 0) {
      int m = Math.min(chunk, keyCount - b);
      chunk = Math.min(MAX_CHUNK, chunk << 1);
      // Phase 1: every key's home entry, loaded independently of the others.
      for (int j = 0; j < m; j++) {
        long key = keys.key(b + j);
        Segment seg = segmentFor(segs, key);
        stamps[j] = seg.lock.tryOptimisticRead();
        Tab t = seg.tab;
        int p = home(key, t.capacity) * t.stride;
        firstKeys[j] = t.slots[p];
        firstWords[j] = t.slots[p + 1];
      }
      // Phase 2: resolve in order, now from cache.
      for (int j = 0; j < m; j++, b++) {
        long key = keys.key(b);
        Segment seg = segmentFor(segs, key);
        if (words == 1) {
          long h;
          long first = firstKeys[j];
          if (first == key) {
            h = firstWords[j];
          } else if (first == 0) {
            h = 0;
          } else {
            h = held1(seg.tab, key);
          }
          if (!seg.lock.validate(stamps[j])) {
            long stamp = seg.lock.readLock();
            try {
              h = held1(seg.tab, key);
            } finally {
              seg.lock.unlockRead(stamp);
            }
          }
          long gone = act & ~h;
          while (gone != 0) {
            depthBySlot[Long.numberOfTrailingZeros(gone)] = b;
            gone &= gone - 1;
          }
          act &= h;
        } else {
          readHeld(seg.tab, key, held, words);
          if (!seg.lock.validate(stamps[j])) {
            long stamp = seg.lock.readLock();
            try {
              readHeld(seg.tab, key, held, words);
            } finally {
              seg.lock.unlockRead(stamp);
            }
          }
          act = 0;
          for (int w = 0; w < words; w++) {
            long still = active[w] & held[w];
            long gone = active[w] & ~still;
            while (gone != 0) {
              depthBySlot[(w << 6) + Long.numberOfTrailingZeros(gone)] = b;
              gone &= gone - 1;
            }
            active[w] = still;
            act |= still;
          }
        }
        if (act == 0) {
          break;
        }
      }
    }
    if (words == 1) {
      active[0] = act;
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

  private static long anyOf(long[] words, int n) {
    long any = 0;
    for (int w = 0; w < n; w++) {
      any |= words[w];
    }
    return any;
  }

  /** Copies the holders of {@code key} into {@code held[0, words)}; a torn read is caught by the caller. */
  private static void readHeld(Tab t, long key, long[] held, int words) {
    int i = find(t, key);
    for (int w = 0; w < words; w++) {
      held[w] = i >= 0 && w < t.words ? t.slots[i * t.stride + 1 + w] : 0;
    }
  }

  /** Word 0 of the holders of {@code key}, or 0. */
  private static long held1(Tab t, long key) {
    int i = find(t, key);
    return i < 0 ? 0 : t.slots[i * t.stride + 1];
  }

  /** The entry index of {@code key}, or -1; bounded, so a racing writer cannot trap an optimistic reader. */
  private static int find(Tab t, long key) {
    long[] s = t.slots;
    int cap = t.capacity;
    int stride = t.stride;
    int i = home(key, cap);
    for (int probes = 0; probes < cap; probes++) {
      long k = s[i * stride];
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

  private static int insertionPoint(Tab t, long key) {
    int cap = t.capacity;
    int i = home(key, cap);
    while (t.slots[i * t.stride] != 0) {
      i = i + 1 == cap ? 0 : i + 1;
    }
    return i;
  }

  private static boolean isEmpty(Tab t, int i) {
    int base = i * t.stride + 1;
    for (int w = 0; w < t.words; w++) {
      if (t.slots[base + w] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Backward-shift deletion keeps probe chains intact without tombstones. */
  private static void delete(Tab t, int hole) {
    int cap = t.capacity;
    int stride = t.stride;
    long[] s = t.slots;
    int i = hole;
    while (true) {
      i = i + 1 == cap ? 0 : i + 1;
      long k = s[i * stride];
      if (k == 0) {
        break;
      }
      int home = home(k, cap);
      int fromHome = i >= home ? i - home : i + cap - home;
      int fromHole = i >= hole ? i - hole : i + cap - hole;
      // k may move back into the hole if the hole lies on its probe path from its home.
      if (fromHole <= fromHome) {
        System.arraycopy(s, i * stride, s, hole * stride, stride);
        hole = i;
      }
    }
    java.util.Arrays.fill(s, hole * stride, hole * stride + stride, 0L);
  }

  private static int grown(int capacity) {
    return capacity + (capacity >>> 1);
  }

  /** Copies live entries into a new array of at least {@code capacity} entries; caller holds the write lock. */
  private static Tab rebuild(Segment seg, int capacity, int words) {
    Tab old = seg.tab;
    int live = 0;
    for (int i = 0; i < old.capacity; i++) {
      if (old.slots[i * old.stride] != 0 && !isEmpty(old, i)) {
        live++;
      }
    }
    int cap = Math.max(MIN_CAPACITY, capacity);
    while (live * 4L > cap * 3L) {
      cap = grown(cap);
    }
    Tab t = new Tab(cap, words);
    int copyWords = Math.min(words, old.words);
    for (int i = 0; i < old.capacity; i++) {
      int from = i * old.stride;
      long k = old.slots[from];
      if (k != 0 && !isEmpty(old, i)) {
        int j = insertionPoint(t, k);
        t.slots[j * t.stride] = k;
        System.arraycopy(old.slots, from + 1, t.slots, j * t.stride + 1, copyWords);
      }
    }
    seg.size = live;
    seg.tab = t;
    return t;
  }
}
