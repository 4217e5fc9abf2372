package dev.kinference.cache;

import java.util.Arrays;

/**
 * The holder sets of one {@link BlockTable} segment: which endpoint slots hold a key, encoded in one {@code long}
 * (the entry's holder word) that grows out of line only when many endpoints hold the key, so the table's memory
 * grows with what is cached and not with the fleet's size times what is cached.
 *
 * <p>A holder word is one of four forms, told apart by its top two bits:
 * <ul>
 *   <li>{@code 00} direct: a bitset of slots 0 to 61 (a fleet of at most 62 endpoints never leaves this form, and
 *       reads it with one load, as before holder sets existed);</li>
 *   <li>{@code 01} inline: up to three slots below 2^20 - 1, 20 bits each (slot + 1, 0 for none): the usual form in a
 *       large fleet, where a block is held by one or a few servers;</li>
 *   <li>{@code 10} list: an index into {@link #lists}, an {@code int[]} holding a count and the slots in ascending
 *       order, while that is smaller than a bitset of the largest slot;</li>
 *   <li>{@code 11} bits: an index into {@link #bits}, a bitset sized by the largest slot, once the set is dense.</li>
 * </ul>
 * A word of 0 is the empty set. Each change keeps the set in the smallest form that fits (a list or bitset is
 * changed in place while its form still fits), so an entry costs 16 bytes in its segment's table plus, only past
 * three holders, about 4 bytes per holder (a list) or 1 bit per slot (a bitset).
 *
 * <p>Hand-written over primitive arrays rather than a library's collections: the core depends only on SLF4J,
 * Jackson and Caffeine, none of which has a compact primitive set, and a boxed or per-key object costs more than the
 * 64 bytes per (block, endpoint) entry the index is held to (docs/PERFORMANCE.md, {@code FleetScaleBench}).
 *
 * <p>Thread-safety: the writing methods must be called with the segment's lock held (one writer at a time). The
 * reading methods ({@link #word0}, {@link #copyTo}, {@link #contains}) may race with a writer: they never fail or
 * loop on a torn read, and return garbage the caller's sequence-lock validation then discards.
 */
final class HolderSets {

  private static final long FORM = 3L << 62;
  private static final long INLINE = 1L << 62;
  private static final long LIST = 2L << 62;
  private static final long BITS = 3L << 62;
  /** Slots 0 to 61 fit the direct form. */
  static final int DIRECT_SLOTS = 62;
  private static final int INLINE_COUNT = 3;
  private static final int INLINE_WIDTH = 20;
  private static final int INLINE_MASK = (1 << INLINE_WIDTH) - 1;
  /** Slots below this fit the inline form (stored as slot + 1 in 20 bits). */
  static final int INLINE_SLOTS = INLINE_MASK;
  private static final int INDEX_MASK = Integer.MAX_VALUE;

  private int[][] lists = new int[0][];
  private long[][] bits = new long[0][];
  private int listsUsed;
  private int bitsUsed;
  private int[] freeLists = new int[0];
  private int freeListCount;
  private int[] freeBits = new int[0];
  private int freeBitsCount;
  /** A set's slots while it changes form; writers only. */
  private int[] scratch = new int[64];

  // ---- reads (may race with a writer; bounded, never throw) ----

  /** Word 0 of the set's bitset: its slots below 64. */
  long word0(long h) {
    long form = h & FORM;
    if (form == 0) {
      return h;
    }
    if (form == INLINE) {
      long w = 0;
      for (int f = 0; f < INLINE_COUNT; f++) {
        int s = inlineField(h, f) - 1;
        if (s >= 0 && s < 64) {
          w |= 1L << s;
        }
      }
      return w;
    }
    if (form == LIST) {
      int[] a = listAt(h);
      int n = Math.min(a.length - 1, a.length == 0 ? 0 : a[0]);
      long w = 0;
      for (int k = 1; k <= n; k++) {
        int s = a[k];
        if (s >= 64) {
          break;
        }
        if (s >= 0) {
          w |= 1L << s;
        }
      }
      return w;
    }
    long[] b = bitsAt(h);
    return b.length == 0 ? 0 : b[0];
  }

  /** Writes the set as a bitset of {@code words} words into {@code out[at, at + words)}, ignoring larger slots. */
  void copyTo(long h, long[] out, int at, int words) {
    Arrays.fill(out, at, at + words, 0L);
    long form = h & FORM;
    if (form == 0) {
      out[at] = h;
    } else if (form == INLINE) {
      for (int f = 0; f < INLINE_COUNT; f++) {
        setBit(out, at, words, inlineField(h, f) - 1);
      }
    } else if (form == LIST) {
      int[] a = listAt(h);
      int n = Math.min(a.length - 1, a.length == 0 ? 0 : a[0]);
      for (int k = 1; k <= n; k++) {
        setBit(out, at, words, a[k]);
      }
    } else {
      long[] b = bitsAt(h);
      System.arraycopy(b, 0, out, at, Math.min(words, b.length));
    }
  }

  /** Whether {@code slot} is in the set. */
  boolean contains(long h, int slot) {
    long form = h & FORM;
    if (form == 0) {
      return slot < DIRECT_SLOTS && (h & (1L << slot)) != 0;
    }
    if (form == INLINE) {
      for (int f = 0; f < INLINE_COUNT; f++) {
        if (inlineField(h, f) == slot + 1) {
          return true;
        }
      }
      return false;
    }
    if (form == LIST) {
      int[] a = listAt(h);
      int n = Math.min(a.length - 1, a.length == 0 ? 0 : a[0]);
      return n > 0 && Arrays.binarySearch(a, 1, n + 1, slot) >= 0;
    }
    long[] b = bitsAt(h);
    int w = slot >>> 6;
    return w < b.length && (b[w] & (1L << slot)) != 0;
  }

  private static void setBit(long[] out, int at, int words, int slot) {
    if (slot >= 0 && (slot >>> 6) < words) {
      out[at + (slot >>> 6)] |= 1L << slot;
    }
  }

  private static int inlineField(long h, int f) {
    return (int) (h >>> (f * INLINE_WIDTH)) & INLINE_MASK;
  }

  private int[] listAt(long h) {
    int[][] ls = lists;
    int i = (int) h & INDEX_MASK;
    int[] a = i < ls.length ? ls[i] : null;
    return a == null ? EMPTY_INTS : a;
  }

  private long[] bitsAt(long h) {
    long[][] bs = bits;
    int i = (int) h & INDEX_MASK;
    long[] b = i < bs.length ? bs[i] : null;
    return b == null ? EMPTY_LONGS : b;
  }

  private static final int[] EMPTY_INTS = new int[0];
  private static final long[] EMPTY_LONGS = new long[0];

  // ---- writes (segment lock held) ----

  /** The set {@code h} with {@code slot} added; {@code slot} must not be in it. May change {@code h}'s arrays. */
  long with(long h, int slot) {
    long form = h & FORM;
    if (form == 0 && slot < DIRECT_SLOTS) {
      return h | (1L << slot);
    }
    if (form == LIST) {
      int i = (int) h & INDEX_MASK;
      int[] a = lists[i];
      int n = a[0];
      if (n + 1 <= listLimit(Math.max(a[n], slot))) {
        if (n + 1 == a.length) {
          a = Arrays.copyOf(a, evenLength(a.length + Math.max(2, a.length >>> 1)));
          lists[i] = a;
        }
        int at = -Arrays.binarySearch(a, 1, n + 1, slot) - 1;
        System.arraycopy(a, at, a, at + 1, n + 1 - at);
        a[at] = slot;
        a[0] = n + 1;
        return h;
      }
    } else if (form == BITS) {
      int i = (int) h & INDEX_MASK;
      long[] b = bits[i];
      if ((slot >>> 6) >= b.length) {
        b = Arrays.copyOf(b, (slot >>> 6) + 1);
        bits[i] = b;
      }
      b[slot >>> 6] |= 1L << slot;
      return h;
    }
    int n = decode(h, 1);
    int at = -Arrays.binarySearch(scratch, 0, n, slot) - 1;
    System.arraycopy(scratch, at, scratch, at + 1, n - at);
    scratch[at] = slot;
    release(h);
    return encode(n + 1);
  }

  /** The set {@code h} without {@code slot}; {@code slot} must be in it. May change {@code h}'s arrays. */
  long without(long h, int slot) {
    long form = h & FORM;
    if (form == 0) {
      return h & ~(1L << slot);
    }
    if (form == LIST) {
      int[] a = lists[(int) h & INDEX_MASK];
      int n = a[0];
      if (n - 1 > INLINE_COUNT) {
        int at = Arrays.binarySearch(a, 1, n + 1, slot);
        System.arraycopy(a, at + 1, a, at, n - at);
        a[n] = 0;
        a[0] = n - 1;
        return h;
      }
    } else if (form == BITS) {
      long[] b = bits[(int) h & INDEX_MASK];
      b[slot >>> 6] &= ~(1L << slot);
      int count = 0;
      for (long w : b) {
        count += Long.bitCount(w);
      }
      // Back to a list only well below the limit, so a set at the threshold does not flip on every change.
      if (count > listLimit(b.length * 64 - 1) / 2) {
        return h;
      }
      int n = decode(h, 0); // the bit is already cleared
      release(h);
      return encode(n);
    }
    int n = decode(h, 0);
    int at = Arrays.binarySearch(scratch, 0, n, slot);
    System.arraycopy(scratch, at + 1, scratch, at, n - at - 1);
    release(h);
    return encode(n - 1);
  }

  /** Frees the arrays of a set that is no longer referenced (its entry was dropped). */
  void release(long h) {
    long form = h & FORM;
    if (form == LIST) {
      int i = (int) h & INDEX_MASK;
      lists[i] = EMPTY_INTS;
      freeLists = push(freeLists, freeListCount++, i);
    } else if (form == BITS) {
      int i = (int) h & INDEX_MASK;
      bits[i] = EMPTY_LONGS;
      freeBits = push(freeBits, freeBitsCount++, i);
    }
  }

  /** Bytes of the out-of-line arrays (object headers included, 16 bytes each, compressed references assumed). */
  long arrayBytes() {
    long n = 16 + 4L * lists.length + 16 + 4L * bits.length + 16 + 4L * freeLists.length + 16 + 4L * freeBits.length;
    for (int[] a : lists) {
      n += a == null || a.length == 0 ? 0 : 16 + 4L * a.length;
    }
    for (long[] b : bits) {
      n += b == null || b.length == 0 ? 0 : 16 + 8L * b.length;
    }
    return n;
  }

  /** Most slots a list whose largest slot is {@code maxSlot} may hold: beyond, a bitset is smaller. */
  private static int listLimit(int maxSlot) {
    return 2 * ((maxSlot >>> 6) + 1);
  }

  /** Even lengths make an {@code int[]} (16-byte header) end on an 8-byte boundary: no padding wasted. */
  private static int evenLength(int n) {
    return (n + 1) & ~1;
  }

  /** Copies the set's slots into {@link #scratch}, ascending, with room for {@code spare} more; returns the count. */
  private int decode(long h, int spare) {
    long form = h & FORM;
    int n = 0;
    if (form == 0) {
      ensureScratch(Long.bitCount(h) + spare);
      for (long rest = h; rest != 0; rest &= rest - 1) {
        scratch[n++] = Long.numberOfTrailingZeros(rest);
      }
    } else if (form == INLINE) {
      ensureScratch(INLINE_COUNT + spare);
      for (int f = 0; f < INLINE_COUNT; f++) {
        int s = inlineField(h, f) - 1;
        if (s >= 0) {
          scratch[n++] = s;
        }
      }
      Arrays.sort(scratch, 0, n);
    } else if (form == LIST) {
      int[] a = lists[(int) h & INDEX_MASK];
      n = a[0];
      ensureScratch(n + spare);
      System.arraycopy(a, 1, scratch, 0, n);
    } else {
      long[] b = bits[(int) h & INDEX_MASK];
      int count = 0;
      for (long w : b) {
        count += Long.bitCount(w);
      }
      ensureScratch(count + spare);
      for (int w = 0; w < b.length; w++) {
        for (long rest = b[w]; rest != 0; rest &= rest - 1) {
          scratch[n++] = (w << 6) + Long.numberOfTrailingZeros(rest);
        }
      }
    }
    return n;
  }

  private void ensureScratch(int n) {
    if (scratch.length < n) {
      scratch = new int[Math.max(n, scratch.length * 2)];
    }
  }

  /** The smallest form holding {@code scratch[0, n)} (ascending), allocating its array if it needs one. */
  private long encode(int n) {
    if (n == 0) {
      return 0;
    }
    int max = scratch[n - 1];
    if (max < DIRECT_SLOTS) {
      long h = 0;
      for (int k = 0; k < n; k++) {
        h |= 1L << scratch[k];
      }
      return h;
    }
    if (n <= INLINE_COUNT && max < INLINE_SLOTS) {
      long h = INLINE;
      for (int k = 0; k < n; k++) {
        h |= (long) (scratch[k] + 1) << (k * INLINE_WIDTH);
      }
      return h;
    }
    if (n <= listLimit(max)) {
      int[] a = new int[evenLength(n + 1 + Math.max(1, n >>> 2))];
      a[0] = n;
      System.arraycopy(scratch, 0, a, 1, n);
      return LIST | allocList(a);
    }
    long[] b = new long[(max >>> 6) + 1];
    for (int k = 0; k < n; k++) {
      b[scratch[k] >>> 6] |= 1L << scratch[k];
    }
    return BITS | allocBits(b);
  }

  private int allocList(int[] a) {
    int i;
    if (freeListCount > 0) {
      i = freeLists[--freeListCount];
    } else {
      i = listsUsed++;
      if (i == lists.length) {
        lists = Arrays.copyOf(lists, Math.max(8, lists.length + (lists.length >>> 1)));
      }
    }
    lists[i] = a;
    return i;
  }

  private int allocBits(long[] b) {
    int i;
    if (freeBitsCount > 0) {
      i = freeBits[--freeBitsCount];
    } else {
      i = bitsUsed++;
      if (i == bits.length) {
        bits = Arrays.copyOf(bits, Math.max(8, bits.length + (bits.length >>> 1)));
      }
    }
    bits[i] = b;
    return i;
  }

  private static int[] push(int[] stack, int at, int value) {
    int[] s = at == stack.length ? Arrays.copyOf(stack, Math.max(8, stack.length * 2)) : stack;
    s[at] = value;
    return s;
  }
}
