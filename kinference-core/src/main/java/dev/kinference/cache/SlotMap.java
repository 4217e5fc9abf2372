package dev.kinference.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Endpoint slot -> per-endpoint structure, read without locks or boxing on the lookup path. Writes (fleet
 * changes, rare) copy the array under a lock; reads see a volatile snapshot.
 */
final class SlotMap<T> {

  private volatile @Nullable Object[] values = new Object[16];

  @SuppressWarnings("unchecked")
  @Nullable T get(int slot) {
    @Nullable Object[] v = values;
    return slot < v.length ? (T) v[slot] : null;
  }

  synchronized void put(int slot, T value) {
    @Nullable Object[] v = values;
    @Nullable Object[] copy = Arrays.copyOf(v, Math.max(v.length, Integer.highestOneBit(slot) << 1));
    copy[slot] = value;
    values = copy;
  }

  @SuppressWarnings("unchecked")
  synchronized @Nullable T remove(int slot) {
    @Nullable Object[] v = values;
    if (slot >= v.length || v[slot] == null) {
      return null;
    }
    T old = (T) v[slot];
    @Nullable Object[] copy = v.clone();
    copy[slot] = null;
    values = copy;
    return old;
  }

  @SuppressWarnings("unchecked")
  List<T> values() {
    List<T> out = new ArrayList<>();
    for (Object o : values) {
      if (o != null) {
        out.add((T) o);
      }
    }
    return out;
  }
}
