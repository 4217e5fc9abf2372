package dev.kinference.cache;

import dev.kinference.prompt.PrefixKeys;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Router block key -> set of endpoint slots holding it: the shared structure of both cache indexes.
 *
 * <p>64 segments, chosen by the key's top six bits; each a {@link SegmentTable} (open addressing over one
 * {@code long[]}, each entry a key followed by its holder word, a set of endpoint slots, see {@link HolderSets}:
 * inline while few endpoints hold the key, out of line only when many do), so a probe touches one cache line and an
 * entry costs 16 bytes whatever the fleet's size. A segment grows by a quarter when three quarters full and shrinks
 * when less than a quarter full, keeping its arrays between 1.33 and about 4 entries' worth per key (between 1.33
 * and 1.67 while it grows). This class is the segments' concurrency (sequence locks) and the two prefix searches
 * over them.
 *
 * <p>A {@link #walk} looks up a prompt's keys in growing chunks (8, 16, 32, then 64 keys): it first loads every
 * chunk key's home entry, plain independent loads whose cache misses overlap, then resolves the keys in order from
 * cache. On a table larger than the caches this pays about one memory latency per chunk instead of one per key. The
 * segments' tables and versions sit in flat arrays, so reaching a key's entry costs one load before the entry.
 *
 * <p>Thread-safety: each segment has a version (a sequence lock): a writer makes it odd while it changes the
 * segment and even again after, writers of one segment exclude each other, and {@link #walk} reads without
 * locking and re-reads when the version moved, so readers never see a torn entry and never block writers. A
 * segment's out-of-line holder sets ({@link HolderSets}) are written under its lock and read under the same version
 * check; a torn read of them is bounded and discarded like a torn entry.
 */
final class BlockTable {

  private static final int SEGMENT_SHIFT = 58;
  private static final int SEGMENTS = 1 << (64 - SEGMENT_SHIFT);
  /** Versions are eight longs (a cache line) apart, so writers of different segments do not share a line. */
  private static final int VERSION_STRIDE = 8;
  /** Keys warmed per chunk of a walk, at most; the first chunks are smaller, so an early miss costs little. */
  private static final int MAX_CHUNK = 64;
  private static final int FIRST_CHUNK = 8;
  /**
   * Prompts of at most this many keys are walked even where bisection would be exact: the walk's one or two warmed
   * chunks cost less than a bisection that splits the candidates several ways (measured on Dynamo's shapes).
   */
  static final int WALK_AT_MOST = 64;
  /** A bisection's stack never holds more than one interval per halving, plus one: 33 for any int-sized prompt. */
  private static final int BISECT_FRAMES = 34;
  /** Levels of a bisection's interval tree whose keys are warmed together before it starts. */
  private static final int WARM_LEVELS = 4;
  /** Spins of a reader or writer waiting for a segment before it parks. */
  private static final int SPINS = 64;

  private static final VarHandle VERSION = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle TAB = MethodHandles.arrayElementVarHandle(SegmentTable[].class);

  /** Per-walk scratch; one per thread, owned by the caller. */
  static final class WalkScratch {
    /** Keeps the warming loads of a walk alive. */
    long sink;
    /** A bisection's stack of intervals {@code [lo, hi]} and the candidates whose depth lies in each. */
    final int[] lo = new int[BISECT_FRAMES];
    final int[] hi = new int[BISECT_FRAMES];
    long[] sets = new long[BISECT_FRAMES];
    long[] probe = new long[1];

    void words(int words) {
      if (probe.length != words) {
        probe = new long[words];
        sets = new long[BISECT_FRAMES * words];
      }
    }
  }

  private final SegmentTable[] tabs = new SegmentTable[SEGMENTS];
  private final long[] versions = new long[SEGMENTS * VERSION_STRIDE];
  private final int[] sizes = new int[SEGMENTS]; // each guarded by its segment's version (odd = held)
  /** Each segment's out-of-line holder sets; written under the segment's lock, read like its table. */
  private final HolderSets[] holders = new HolderSets[SEGMENTS];

  BlockTable() {
    for (int i = 0; i < SEGMENTS; i++) {
      tabs[i] = new SegmentTable(SegmentTable.MIN_CAPACITY);
      holders[i] = new HolderSets();
    }
    VarHandle.releaseFence();
  }

  private static int segmentOf(long key) {
    return (int) (key >>> SEGMENT_SHIFT);
  }

  // ---- segment versions (sequence locks) ----

  /** Waits for segment {@code s} to be free and takes it; returns the odd version to hand to {@link #unlock}. */
  private long lock(int s) {
    int at = s * VERSION_STRIDE;
    for (int spins = 0; ; spins++) {
      long v = (long) VERSION.getVolatile(versions, at);
      if ((v & 1) == 0 && VERSION.compareAndSet(versions, at, v, v + 1)) {
        return v + 1;
      }
      backOff(spins);
    }
  }

  /** Spins briefly, then parks a microsecond at a time, so a waiter never burns a core behind a slow rebuild. */
  private static void backOff(int spins) {
    if (spins < SPINS) {
      Thread.onSpinWait();
    } else {
      LockSupport.parkNanos(1_000);
    }
  }

  private void unlock(int s, long odd) {
    VERSION.setRelease(versions, s * VERSION_STRIDE, odd + 1);
  }

  /** The segment's version once it is even (no writer inside); reads that follow are ordered after it. */
  private long readVersion(int s) {
    int at = s * VERSION_STRIDE;
    for (int spins = 0; ; spins++) {
      long v = (long) VERSION.getAcquire(versions, at);
      if ((v & 1) == 0) {
        return v;
      }
      backOff(spins);
    }
  }

  /** Whether the segment did not change since {@code version} was read; orders the reads before it. */
  private boolean validate(int s, long version) {
    VarHandle.loadLoadFence();
    return (long) VERSION.getOpaque(versions, s * VERSION_STRIDE) == version;
  }

  private SegmentTable tab(int s) {
    return (SegmentTable) TAB.getAcquire(tabs, s);
  }

  private void publish(int s, SegmentTable t) {
    TAB.setRelease(tabs, s, t);
  }

  // ---- writes ----

  /**
   * Reads the home entries of {@code keys[0, count)} without locking, so that a batch of writes that follows finds
   * them in cache: the reads are independent and overlap, where each write (it takes a lock) would wait for its own.
   * Returns a value the caller must keep (in a field), so the reads are not optimised away.
   */
  long touch(long[] keys, int count) {
    long sink = 0;
    for (int i = 0; i < count; i++) {
      long key = keys[i];
      sink ^= tab(segmentOf(key)).homeKey(key);
    }
    return sink;
  }

  /** Adds {@code slot} to the holders of {@code key}; returns true if it was not there. */
  boolean add(long key, int slot) {
    int s = segmentOf(key);
    long held = lock(s);
    try {
      SegmentTable t = tabs[s];
      int i = t.find(key);
      if (i < 0) {
        if ((sizes[s] + 1) * 4L > t.capacity * 3L) {
          t = rebuild(s, SegmentTable.grown(t.capacity));
        }
        i = t.insertionPoint(key);
        t.setKey(i, key);
        sizes[s]++;
      }
      HolderSets sets = holders[s];
      long h = t.holdersAt(i);
      if (sets.contains(h, slot)) {
        return false;
      }
      t.setHolders(i, sets.with(h, slot));
      return true;
    } finally {
      unlock(s, held);
    }
  }

  /** Removes {@code slot} from the holders of {@code key}; returns true if it was there. */
  boolean remove(long key, int slot) {
    int s = segmentOf(key);
    long held = lock(s);
    try {
      SegmentTable t = tabs[s];
      int i = t.find(key);
      if (i < 0) {
        return false;
      }
      HolderSets sets = holders[s];
      long h = t.holdersAt(i);
      if (!sets.contains(h, slot)) {
        return false;
      }
      long rest = sets.without(h, slot);
      t.setHolders(i, rest);
      if (rest == 0) {
        t.delete(i);
        sizes[s]--;
        if (t.capacity > SegmentTable.MIN_CAPACITY && sizes[s] * 4L < t.capacity) {
          rebuild(s, sizes[s] * 2);
        }
      }
      return true;
    } finally {
      unlock(s, held);
    }
  }

  /** Whether {@code slot} holds {@code key}. */
  boolean contains(long key, int slot) {
    int s = segmentOf(key);
    while (true) {
      long v = readVersion(s);
      boolean held = holders[s].contains(tab(s).holdersOf(key), slot);
      if (validate(s, v)) {
        return held;
      }
    }
  }

  /** Removes {@code slot} from every entry: O(table size), for a server restart or an endpoint that left. */
  void clearSlot(int slot) {
    for (int s = 0; s < SEGMENTS; s++) {
      long held = lock(s);
      try {
        SegmentTable t = tabs[s];
        HolderSets sets = holders[s];
        boolean emptied = false;
        for (int i = 0; i < t.capacity; i++) {
          if (t.keyAt(i) != 0 && sets.contains(t.holdersAt(i), slot)) {
            long rest = sets.without(t.holdersAt(i), slot);
            t.setHolders(i, rest);
            emptied |= rest == 0;
          }
        }
        if (emptied) {
          rebuild(s, t.capacity);
        }
      } finally {
        unlock(s, held);
      }
    }
  }

  /** Number of distinct keys. */
  long keyCount() {
    long n = 0;
    for (int s = 0; s < SEGMENTS; s++) {
      long held = lock(s);
      try {
        n += sizes[s];
      } finally {
        unlock(s, held);
      }
    }
    return n;
  }

  /** Bytes held by the arrays (the tables' without object headers, the holder sets' with): for memory reporting. */
  long arrayBytes() {
    long n = 0;
    for (int s = 0; s < SEGMENTS; s++) {
      long held = lock(s);
      try {
        n += 8L * tabs[s].slots.length + holders[s].arrayBytes();
      } finally {
        unlock(s, held);
      }
    }
    return n;
  }

  // ---- the walk ----

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
    SegmentTable[] segmentTabs = tabs;
    long act = words == 1 ? active[0] : anyOf(active, words);
    int b = 0;
    int chunk = FIRST_CHUNK;
    while (b < keyCount && act != 0) {
      int end = Math.min(keyCount, b + chunk);
      chunk = Math.min(MAX_CHUNK, chunk << 1);
      // Warm the chunk's home entries: plain loads, independent of each other, so their cache misses overlap
      // instead of queueing one behind the other.
      long sink = 0;
      for (int i = b; i < end; i++) {
        long key = keys.key(i);
        sink ^= segmentTabs[segmentOf(key)].homeKey(key);
      }
      scratch.sink ^= sink;
      // Then resolve each key in order, from cache, under its segment's version. (A plain read of the segment's
      // table after the version's acquiring read is ordered after it; its final fields make it safe to share.)
      for (; b < end; b++) {
        long key = keys.key(b);
        int s = segmentOf(key);
        if (words == 1) {
          long h;
          long v = readVersion(s);
          while (true) {
            h = holders[s].word0(segmentTabs[s].holdersOf(key));
            if (validate(s, v)) {
              break;
            }
            v = readVersion(s);
          }
          long gone = act & ~h;
          while (gone != 0) {
            depthBySlot[Long.numberOfTrailingZeros(gone)] = b;
            gone &= gone - 1;
          }
          act &= h;
        } else {
          readHeldConsistently(key, held, words);
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
    setDepth(active, 0, words, depthBySlot, keyCount);
  }

  /**
   * For each candidate, the number of leading keys of {@code keys} it holds, where every candidate's held keys are a
   * prefix of {@code keys} (it holds key i only if it holds key i - 1): the first and last keys settle the candidates
   * holding none or all, then a bisection on the holders of single keys splits the rest wherever they part, so a
   * prompt of n blocks costs about log2(n) probes per distinct depth rather than n. The keys of the bisection's
   * first levels are loaded together before it starts, so their cache misses overlap.
   *
   * @param active bitset of candidate slots ({@code active.length} words); cleared by this call
   * @param depthBySlot receives, for every slot set in {@code active}, its matched depth
   * @param scratch this thread's scratch
   */
  void bisect(PrefixKeys keys, long[] active, int[] depthBySlot, WalkScratch scratch) {
    int words = active.length;
    if (anyOf(active, words) == 0) {
      return;
    }
    int n = keys.size();
    scratch.words(words);
    long[] probe = scratch.probe;
    // The ends first: a candidate holding no key, or the last one, needs no bisection. Most do either.
    long any;
    if (n == 0) {
      any = 0;
      setDepth(active, 0, words, depthBySlot, 0);
    } else {
      any = narrow(keys.key(0), active, probe, words, false);
      setDepth(probe, 0, words, depthBySlot, 0);
      if (any != 0) {
        any = narrow(keys.key(n - 1), active, probe, words, true);
        setDepth(probe, 0, words, depthBySlot, n);
      }
    }
    if (any == 0) {
      Arrays.fill(active, 0);
      return;
    }
    // The rest hold between 1 and n - 1 keys.
    if (n - 2 > MAX_CHUNK) {
      scratch.sink ^= warmBisection(keys, 1, n - 1, WARM_LEVELS);
    }
    int[] los = scratch.lo;
    int[] his = scratch.hi;
    long[] sets = scratch.sets;
    // Invariant: each frame's candidates hold at least lo and at most hi leading keys.
    los[0] = 1;
    his[0] = n - 1;
    System.arraycopy(active, 0, sets, 0, words);
    Arrays.fill(active, 0);
    int top = 1;
    while (top > 0) {
      int f = top - 1;
      int lo = los[f];
      int hi = his[f];
      int at = f * words;
      if (lo == hi) {
        setDepth(sets, at, words, depthBySlot, lo);
        top = f;
        continue;
      }
      int mid = (lo + hi) >>> 1;
      readHeldConsistently(keys.key(mid), probe, words);
      // Holders of key mid hold more than mid keys: they go to [mid + 1, hi]; the rest hold at most mid.
      long deeper = 0;
      long shallower = 0;
      int next = at + words;
      for (int w = 0; w < words; w++) {
        long set = sets[at + w];
        long d = set & probe[w];
        sets[next + w] = d;
        sets[at + w] = set & ~d;
        deeper |= d;
        shallower |= set & ~d;
      }
      if (shallower != 0) {
        his[f] = mid;
        if (deeper != 0) {
          los[f + 1] = mid + 1;
          his[f + 1] = hi;
          top = f + 2;
        }
      } else {
        System.arraycopy(sets, next, sets, at, words);
        los[f] = mid + 1;
      }
    }
  }

  /**
   * Splits the candidates in {@code set} by whether they hold {@code key}: the ones whose depth this settles go to
   * {@code settled} (the holders if {@code holdersSettle}, else the others), the rest stay in {@code set}. Returns
   * non-zero if any stay.
   */
  private long narrow(long key, long[] set, long[] settled, int words, boolean holdersSettle) {
    readHeldConsistently(key, settled, words);
    long any = 0;
    for (int w = 0; w < words; w++) {
      long holders = set[w] & settled[w];
      long others = set[w] & ~holders;
      set[w] = holdersSettle ? others : holders;
      settled[w] = holdersSettle ? holders : others;
      any |= set[w];
    }
    return any;
  }

  /** Writes {@code depth} for every slot in the bitset {@code slots[from, from + words)} and clears it. */
  private static void setDepth(long[] slots, int from, int words, int[] depthBySlot, int depth) {
    for (int w = 0; w < words; w++) {
      long rest = slots[from + w];
      while (rest != 0) {
        depthBySlot[(w << 6) + Long.numberOfTrailingZeros(rest)] = depth;
        rest &= rest - 1;
      }
      slots[from + w] = 0;
    }
  }

  /** Copies the holders of {@code key} into {@code out}, re-reading while its segment changes. */
  private void readHeldConsistently(long key, long[] out, int words) {
    int s = segmentOf(key);
    long v = readVersion(s);
    while (true) {
      holders[s].copyTo(tabs[s].holdersOf(key), out, 0, words);
      if (validate(s, v)) {
        return;
      }
      v = readVersion(s);
    }
  }

  /** Loads the home entries of the keys the first {@code levels} halvings of {@code [lo, hi]} will probe. */
  private long warmBisection(PrefixKeys keys, int lo, int hi, int levels) {
    if (lo >= hi || levels == 0) {
      return 0;
    }
    int mid = (lo + hi) >>> 1;
    long key = keys.key(mid);
    return tabs[segmentOf(key)].homeKey(key) ^ warmBisection(keys, lo, mid, levels - 1)
        ^ warmBisection(keys, mid + 1, hi, levels - 1);
  }

  private static long anyOf(long[] words, int n) {
    long any = 0;
    for (int w = 0; w < n; w++) {
      any |= words[w];
    }
    return any;
  }

  /** Replaces segment {@code s}'s table by one of at least {@code capacity} entries holding its live ones; s is held. */
  private SegmentTable rebuild(int s, int capacity) {
    SegmentTable old = tabs[s];
    int live = old.liveCount();
    SegmentTable t = SegmentTable.rebuiltFrom(old, capacity, live);
    sizes[s] = live;
    publish(s, t);
    return t;
  }
}
