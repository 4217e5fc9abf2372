package dev.kinference.cache;

/**
 * One endpoint's cached blocks as its engine names them: engine block hash -> router key, with each block's link to
 * its parent, so the index knows whether the endpoint's blocks are <em>prefix-closed</em> (every held block's parent
 * is held too). While they are, the holders of a prompt's blocks can be found by bisection instead of a walk over
 * every block; see {@link BlockTable#bisect}.
 *
 * <p>Each entry keeps, besides the hash and the key, a 32-bit fingerprint of its parent's hash and the number of its
 * children that are held. Storing a block counts it at its parent; removing one uncounts it at the parent found by
 * that fingerprint. A removal that leaves a held child without its parent breaks prefix closure, and so, to stay
 * exact, does anything the counts cannot vouch for: two entries answering the same fingerprint, a count at its
 * limit, a block whose parent is already gone. Once broken, the map stays broken until {@link #clear}: vLLM frees a
 * request's blocks tail first and evicts the oldest free block, so a full-attention engine never breaks it, and an
 * endpoint that does is looked up the slow, exact way.
 *
 * <p>Open addressing with linear probing; an entry's hash, router key and links (parent fingerprint and child count)
 * interleave in one array, so a probe, an insert or a removal touches one cache line. A key's home entry is the high
 * 32 bits of its mixed hash (the fingerprint) scaled to the capacity, so a parent can be found from its fingerprint
 * alone. The map grows by a quarter when three quarters full, so while it grows it stays between 60% and 75% full:
 * 32 to 40 bytes per entry (growing by half, it was 32 to 48: the most of a large fleet's index, whose endpoints each
 * hold a map; {@code FleetScaleBench}). Engine hash 0 (the empty marker) lives in an extra entry at index
 * {@code capacity}.
 *
 * <p>Not thread-safe: the owner guards it.
 */
final class EngineBlockMap {

  /** Returned for an absent block; router keys are never 0 ({@link dev.kinference.prompt.BlockKeys}). */
  static final long MISSING = 0;

  /** Receives one entry. */
  @FunctionalInterface
  interface EntryConsumer {
    void accept(long hash, long key);
  }

  private static final long EMPTY = 0;
  private static final int MIN_CAPACITY = 16;
  private static final int ROOT = 0x8000;
  private static final int CHILDREN = 0x7FFF;

  /**
   * {@code [hash, router key, links]} triples; hash 0 marks an empty entry. Links: the parent's fingerprint in the
   * high 32 bits (meaningless for a root), bit 15 set if the entry starts a chain (its parent is the seed), bits 0-14
   * its held children.
   */
  private long[] entries;
  private int capacity;
  private int size;
  private boolean hasZeroHash;
  /** Written by the owner only; volatile so lookups may read {@link #prefixClosed} without the owner's guard. */
  private volatile boolean prefixBroken;

  EngineBlockMap(int expected) {
    allocate(Math.max(MIN_CAPACITY, (int) Math.min(1 << 29, expected * 4L / 3 + 1)));
  }

  private static final int STRIDE = 3;

  private void allocate(int cap) {
    capacity = cap;
    entries = new long[STRIDE * (cap + 1)];
  }

  private int links(int at) {
    return (int) (entries[STRIDE * at + 2] & 0xFFFF);
  }

  private void setLinks(int at, int links) {
    int i = STRIDE * at + 2;
    entries[i] = (entries[i] & ~0xFFFFL) | (links & 0xFFFF);
  }

  private int parentPrint(int at) {
    return (int) (entries[STRIDE * at + 2] >>> 32);
  }

  int size() {
    return size + (hasZeroHash ? 1 : 0);
  }

  /**
   * Whether every held block's parent is held too, as far as the map can vouch; false until {@link #clear}. The one
   * method any thread may call: a removal that breaks prefix closure says so before it returns the removed key.
   */
  boolean prefixClosed() {
    return !prefixBroken;
  }

  /**
   * Reads the home entries of {@code hashes[0, count)}, so that the finds, inserts and removes that follow find them
   * in cache (the reads overlap; see {@link BlockTable#touch}). Returns a value the caller must keep.
   */
  long touch(long[] hashes, int count) {
    long[] e = entries;
    int cap = capacity;
    long sink = 0;
    for (int i = 0; i < count; i++) {
      sink ^= e[STRIDE * home(print(hashes[i]), cap)];
    }
    return sink;
  }

  /** The index of {@code hash}'s entry, or -1. Valid until the next insert or removal. */
  int find(long hash) {
    if (hash == EMPTY) {
      return hasZeroHash ? capacity : -1;
    }
    long[] e = entries;
    int cap = capacity;
    int i = home(print(hash), cap);
    while (true) {
      long k = e[STRIDE * i];
      if (k == hash) {
        return i;
      }
      if (k == EMPTY) {
        return -1;
      }
      i = i + 1 == cap ? 0 : i + 1;
    }
  }

  /** The router key of entry {@code at}. */
  long keyAt(int at) {
    return entries[STRIDE * at + 1];
  }

  void setKeyAt(int at, long key) {
    entries[STRIDE * at + 1] = key;
  }

  /** The router key of {@code hash}, or {@link #MISSING}. */
  long get(long hash) {
    int at = find(hash);
    return at < 0 ? MISSING : keyAt(at);
  }

  /**
   * Adds an absent block and counts it at its parent. Returns its entry index. Grows the map first when it is three
   * quarters full, which moves entries: the parent is found again by its hash, and indexes the caller kept from
   * before are stale (the one returned is valid). Growing one insert at a time, rather than reserving room for a
   * whole event up front, keeps a map whose events mostly repeat held blocks from growing for inserts that never
   * come (most of a thousand endpoints' maps, each holding a few hundred blocks, were a growth step too large).
   *
   * @param parentAt the parent's entry index, or -1 when the block starts a chain
   * @param parentHash the parent's hash (ignored when it starts a chain)
   */
  int insert(long hash, long key, int parentAt, long parentHash) {
    if (hash != EMPTY && (size + 1L) * 4L > capacity * 3L) {
      rehash(grown(capacity));
      if (parentAt >= 0) {
        parentAt = find(parentHash);
      }
    }
    int at;
    if (hash == EMPTY) {
      hasZeroHash = true;
      at = capacity;
    } else {
      long[] e = entries;
      int cap = capacity;
      at = home(print(hash), cap);
      while (e[STRIDE * at] != EMPTY) {
        at = at + 1 == cap ? 0 : at + 1;
      }
      e[STRIDE * at] = hash;
      size++;
    }
    entries[STRIDE * at + 1] = key;
    if (parentAt < 0) {
      entries[STRIDE * at + 2] = ROOT;
    } else {
      entries[STRIDE * at + 2] = (long) print(parentHash) << 32;
      int parentLinks = links(parentAt);
      if ((parentLinks & CHILDREN) == CHILDREN) {
        prefixBroken = true; // the count cannot go higher, so it cannot vouch for the parent's removal
      } else {
        setLinks(parentAt, parentLinks + 1);
      }
    }
    return at;
  }

  /** Removes {@code hash}; returns its router key or {@link #MISSING}. */
  long remove(long hash) {
    int at = find(hash);
    if (at < 0) {
      return MISSING;
    }
    long key = keyAt(at);
    int own = links(at);
    if ((own & CHILDREN) != 0) {
      prefixBroken = true; // a held child loses its parent
    }
    if ((own & ROOT) == 0) {
      uncountAtParent(at);
    }
    if (at == capacity) {
      hasZeroHash = false;
    } else {
      deleteAt(at);
      size--;
      if (capacity > MIN_CAPACITY && size * 4L < capacity) {
        rehash(Math.max(MIN_CAPACITY, size * 2));
      }
    }
    return key;
  }

  /** Takes entry {@code child} off its parent's count; the parent is the one entry answering its fingerprint. */
  private void uncountAtParent(int child) {
    int print = parentPrint(child);
    long[] e = entries;
    int cap = capacity;
    int parent = -1;
    int matches = 0;
    for (int i = home(print, cap); e[STRIDE * i] != EMPTY; i = i + 1 == cap ? 0 : i + 1) {
      if (i != child && print(e[STRIDE * i]) == print) {
        parent = i;
        matches++;
      }
    }
    if (print == print(EMPTY) && hasZeroHash && child != capacity) {
      parent = capacity;
      matches++;
    }
    if (matches != 1 || (links(parent) & CHILDREN) == 0) {
      // No parent (it left first: already broken), or one the fingerprint cannot single out.
      prefixBroken = true;
      return;
    }
    setLinks(parent, links(parent) - 1);
  }

  /** Calls {@code action(hash, key)} for every entry; the action must not modify this map. */
  void forEach(EntryConsumer action) {
    long[] e = entries;
    for (int i = 0; i < capacity; i++) {
      if (e[STRIDE * i] != EMPTY) {
        action.accept(e[STRIDE * i], e[STRIDE * i + 1]);
      }
    }
    if (hasZeroHash) {
      action.accept(EMPTY, e[STRIDE * capacity + 1]);
    }
  }

  /** Forgets every block; the map is prefix-closed again. */
  void clear() {
    allocate(MIN_CAPACITY);
    size = 0;
    hasZeroHash = false;
    prefixBroken = false;
  }

  long arrayBytes() {
    return 8L * entries.length;
  }

  /** Backward-shift deletion keeps probe chains intact without tombstones. */
  private void deleteAt(int hole) {
    long[] e = entries;
    int cap = capacity;
    int i = hole;
    while (true) {
      i = i + 1 == cap ? 0 : i + 1;
      long k = e[STRIDE * i];
      if (k == EMPTY) {
        break;
      }
      int home = home(print(k), cap);
      int fromHome = i >= home ? i - home : i + cap - home;
      int fromHole = i >= hole ? i - hole : i + cap - hole;
      // k may move back into the hole if the hole lies on its probe path from its home.
      if (fromHole <= fromHome) {
        System.arraycopy(e, STRIDE * i, e, STRIDE * hole, STRIDE);
        hole = i;
      }
    }
    e[STRIDE * hole] = EMPTY;
    e[STRIDE * hole + 1] = 0;
    e[STRIDE * hole + 2] = 0;
  }

  private void rehash(int newCapacity) {
    long[] old = entries;
    int oldCapacity = capacity;
    allocate(newCapacity);
    long[] e = entries;
    int cap = capacity;
    for (int j = 0; j < oldCapacity; j++) {
      long k = old[STRIDE * j];
      if (k != EMPTY) {
        int i = home(print(k), cap);
        while (e[STRIDE * i] != EMPTY) {
          i = i + 1 == cap ? 0 : i + 1;
        }
        System.arraycopy(old, STRIDE * j, e, STRIDE * i, STRIDE);
      }
    }
    if (hasZeroHash) {
      System.arraycopy(old, STRIDE * oldCapacity, e, STRIDE * cap, STRIDE);
    }
  }

  /**
   * A quarter more: the lookups' probe lengths are bounded by the three-quarters load as before, and the slack a
   * growth leaves is half what growing by half left, for twice the rehashing (each entry is copied four times on
   * average instead of twice), which only the writer pays.
   */
  private static int grown(int capacity) {
    return capacity + Math.max(1, capacity >>> 2);
  }

  /** Engine hashes may be sequential or low-entropy: the high 32 bits of the mixed hash. */
  static int print(long hash) {
    return (int) ((hash * 0x9E3779B97F4A7C15L) >>> 32);
  }

  /** The home entry of a fingerprint, scaled to the capacity. */
  private static int home(int print, int capacity) {
    return (int) (((print & 0xFFFF_FFFFL) * capacity) >>> 32);
  }
}
