package dev.kinference.sim.fleet;

import java.util.Arrays;

/**
 * The servers of a run ordered by when each next needs the clock: a binary min-heap of server indexes keyed by
 * {@link dev.kinference.sim.engine.SimEngine#nextEventNanos}, ties to the lower index, so the fleet finds its next
 * server in O(1) and re-keys one in O(log n) instead of scanning every server on every event. The order is the one
 * a scan in index order gives, so runs stay bit-for-bit what they were.
 *
 * <p>Not thread-safe: one run's thread owns it.
 */
final class NextEventHeap {

  private final long[] time;
  private final int[] heap;
  /** Where each server sits in {@link #heap}. */
  private final int[] at;

  /** Every server at {@link Long#MAX_VALUE} (idle). */
  NextEventHeap(int servers) {
    time = new long[servers];
    heap = new int[servers];
    at = new int[servers];
    Arrays.fill(time, Long.MAX_VALUE);
    for (int i = 0; i < servers; i++) {
      heap[i] = i;
      at[i] = i;
    }
  }

  /** The server with the earliest next event (the lowest index among ties). */
  int first() {
    return heap[0];
  }

  /** When {@link #first()} next needs the clock; {@link Long#MAX_VALUE} if no server does. */
  long firstTime() {
    return time[heap[0]];
  }

  /** Sets when {@code server} next needs the clock. */
  void update(int server, long nanos) {
    long old = time[server];
    if (old == nanos) {
      return;
    }
    time[server] = nanos;
    if (nanos < old) {
      up(at[server]);
    } else {
      down(at[server]);
    }
  }

  private boolean before(int a, int b) {
    return time[a] < time[b] || (time[a] == time[b] && a < b);
  }

  private void up(int i) {
    int server = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (!before(server, heap[parent])) {
        break;
      }
      place(heap[parent], i);
      i = parent;
    }
    place(server, i);
  }

  private void down(int i) {
    int n = heap.length;
    int server = heap[i];
    while (true) {
      int child = 2 * i + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && before(heap[child + 1], heap[child])) {
        child++;
      }
      if (!before(heap[child], server)) {
        break;
      }
      place(heap[child], i);
      i = child;
    }
    place(server, i);
  }

  private void place(int server, int i) {
    heap[i] = server;
    at[server] = i;
  }
}
