package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The KV events an engine step records, each with the KV-cache group it belongs to (vLLM's {@code group_idx}).
 * Events added straight to {@link #events} belong to group 0.
 *
 * <p>Not thread-safe; owned by one {@link KvCacheManager}.
 */
final class KvEventLog {

  final List<KvEvent> events = new ArrayList<>();
  private int[] groups = new int[16];

  /** Records {@code event} of group {@code group}. */
  void add(KvEvent event, int group) {
    events.add(event);
    int i = events.size() - 1;
    if (group != 0) {
      if (i >= groups.length) {
        groups = Arrays.copyOf(groups, Math.max(i + 1, groups.length * 2));
      }
      groups[i] = group;
    }
  }

  boolean isEmpty() {
    return events.isEmpty();
  }

  /** The group of each recorded event, in order. */
  List<Integer> groups() {
    Integer[] out = new Integer[events.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = i < groups.length ? groups[i] : 0;
    }
    return List.of(out);
  }

  void clear() {
    Arrays.fill(groups, 0, Math.min(groups.length, events.size()), 0);
    events.clear();
  }
}
