package dev.kinference.cache;

import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;

/**
 * A bounded set of router block keys in least-recently-used order, with the time each was last used: one per
 * endpoint in the approximate index. Nodes live in parallel arrays linked by index, so touching and evicting
 * allocate nothing; the node arrays grow by half up to the capacity, and the key-to-node table is at most three
 * quarters full, so a key costs 25 to 38 bytes while the set grows. Times are 32-bit ticks of the owner's choosing,
 * compared by wrapping difference: any two live ones must be less than 2^31 ticks apart. Not thread-safe: the owner
 * guards it.
 */
final class LruKeySet {

  /** Receives keys that leave the set. */
  interface Eviction {
    void evicted(long key);
  }

  private static final int NIL = -1;

  private int capacity;
  // node storage
  private long[] nodeKey;
  private int[] nodeTime;
  private int[] prev;
  private int[] next;
  private int head = NIL; // most recent
  private int tail = NIL; // least recent
  private int size;
  private int freeList = NIL;
  private int allocated;
  // key -> node index + 1 (0 = empty), open addressing over the node keys; any capacity (homes are scaled)
  private int[] table;

  LruKeySet(int capacity) {
    this.capacity = capacity;
    int initial = Math.min(capacity, 256);
    nodeKey = new long[initial];
    nodeTime = new int[initial];
    prev = new int[initial];
    next = new int[initial];
    table = new int[tableSizeFor(initial)];
  }

  int size() {
    return size;
  }

  int capacity() {
    return capacity;
  }

  /** Changes the bound; excess least-recent keys are evicted. */
  void capacity(int newCapacity, Eviction eviction) {
    capacity = newCapacity;
    while (size > capacity) {
      evictTail(eviction);
    }
  }

  /**
   * Marks {@code key} used at {@code now}, adding it if absent (evicting the least recent key when full).
   *
   * @return true if the key was added
   */
  boolean touch(long key, int now, Eviction eviction) {
    int n = find(key);
    if (n != NIL) {
      if (now - nodeTime[n] > 0) { // a retained key's time may lie ahead (see expireBefore); never shorten it
        nodeTime[n] = now;
      }
      moveToHead(n);
      return false;
    }
    if (size >= capacity) {
      evictTail(eviction);
    }
    n = allocate();
    nodeKey[n] = key;
    nodeTime[n] = now;
    linkHead(n);
    insertIntoTable(n);
    size++;
    return true;
  }

  /**
   * Reads the table entries and nodes of {@code keys[0, count)}, so that the touches that follow find them in
   * cache: these reads are independent of each other and overlap, where each touch waits for its own. Returns a
   * value the caller must keep, so the reads are not optimised away.
   */
  long warm(PrefixKeys keys, int count) {
    int[] t = table;
    long[] k = nodeKey;
    int[] p = prev;
    long sink = 0;
    for (int i = 0; i < count; i++) {
      int e = t[home(keys.key(i), t.length)];
      if (e != 0) {
        sink ^= k[e - 1] ^ p[e - 1];
      }
    }
    return sink;
  }

  /**
   * Evicts every key last used before {@code deadline}; returns how many. A key may carry a use time after
   * {@code now}: a client asked that it be kept longer (see {@code ApproximateCacheIndex}). Such a key reaching the
   * tail is moved to the head instead and the sweep goes on, so it never holds back the expiry of the keys behind
   * it; in exchange it counts as recently used for the capacity bound while its retention lasts. Once that use time
   * is no longer ahead of {@code now}, the key expires at most one time-to-live late.
   */
  int expireBefore(int deadline, int now, Eviction eviction) {
    int n = 0;
    int rotated = 0;
    while (tail != NIL) {
      if (nodeTime[tail] - deadline < 0) {
        evictTail(eviction);
        n++;
      } else if (nodeTime[tail] - now > 0 && rotated < size) {
        moveToHead(tail);
        rotated++;
      } else {
        break;
      }
    }
    return n;
  }

  boolean contains(long key) {
    return find(key) != NIL;
  }

  /** Removes every key, reporting each. */
  void clear(Eviction eviction) {
    while (tail != NIL) {
      evictTail(eviction);
    }
  }

  long arrayBytes() {
    return 20L * nodeKey.length + 4L * table.length;
  }

  private int next(int i) {
    return i + 1 == table.length ? 0 : i + 1;
  }

  private void evictTail(Eviction eviction) {
    int n = tail;
    long key = nodeKey[n];
    unlink(n);
    removeFromTable(n);
    size--;
    prev[n] = NIL;
    next[n] = freeList;
    freeList = n;
    eviction.evicted(key);
  }

  private int allocate() {
    if (freeList != NIL) {
      int n = freeList;
      freeList = next[n];
      return n;
    }
    if (allocated == nodeKey.length) {
      int grown = (int) Math.min((long) capacity, Math.max(16L, nodeKey.length + (nodeKey.length >>> 1)));
      grown = Math.max(grown, allocated + 1);
      nodeKey = Arrays.copyOf(nodeKey, grown);
      nodeTime = Arrays.copyOf(nodeTime, grown);
      prev = Arrays.copyOf(prev, grown);
      next = Arrays.copyOf(next, grown);
      rehash(tableSizeFor(grown));
    }
    return allocated++;
  }

  private void linkHead(int n) {
    prev[n] = NIL;
    next[n] = head;
    if (head != NIL) {
      prev[head] = n;
    }
    head = n;
    if (tail == NIL) {
      tail = n;
    }
  }

  private void unlink(int n) {
    int p = prev[n];
    int x = next[n];
    if (p != NIL) {
      next[p] = x;
    } else {
      head = x;
    }
    if (x != NIL) {
      prev[x] = p;
    } else {
      tail = p;
    }
  }

  private void moveToHead(int n) {
    if (head != n) {
      unlink(n);
      linkHead(n);
    }
  }

  private int find(long key) {
    int i = home(key, table.length);
    while (true) {
      int e = table[i];
      if (e == 0) {
        return NIL;
      }
      if (nodeKey[e - 1] == key) {
        return e - 1;
      }
      i = next(i);
    }
  }

  private void insertIntoTable(int n) {
    int i = home(nodeKey[n], table.length);
    while (table[i] != 0) {
      i = next(i);
    }
    table[i] = n + 1;
  }

  private void removeFromTable(int n) {
    int cap = table.length;
    int hole = home(nodeKey[n], cap);
    while (table[hole] != n + 1) {
      hole = next(hole);
    }
    int i = hole;
    while (true) {
      i = next(i);
      int e = table[i];
      if (e == 0) {
        break;
      }
      int home = home(nodeKey[e - 1], cap);
      int fromHome = i >= home ? i - home : i + cap - home;
      int fromHole = i >= hole ? i - hole : i + cap - hole;
      // e may move back into the hole if the hole lies on its probe path from its home.
      if (fromHole <= fromHome) {
        table[hole] = e;
        hole = i;
      }
    }
    table[hole] = 0;
  }

  private void rehash(int tableSize) {
    table = new int[tableSize];
    for (int n = head; n != NIL; n = next[n]) {
      insertIntoTable(n);
    }
  }

  /** A table at most three quarters full when every node is in use. */
  private static int tableSizeFor(int nodes) {
    return (int) Math.max(8, nodes * 4L / 3 + 1);
  }

  /** Router keys are well mixed: scale their low 32 bits to the table size. */
  private static int home(long key, int tableSize) {
    return (int) (((key & 0xFFFF_FFFFL) * tableSize) >>> 32);
  }
}
