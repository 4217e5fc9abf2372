package dev.kinference.gateway;

import dev.kinference.request.TrafficClass;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The gateway's waiting room for requests whose endpoints are all saturated. Order: interactive before batch, then
 * higher priority first; within one class and priority, tenants take turns (round robin), and each tenant's
 * requests keep their arrival order. Bounded: when full, an offer is refused.
 *
 * <p>Requests for different models do not block each other: {@link #drain} looks at the first waiting request of
 * each distinct group (model) and skips groups whose endpoints are still saturated. Thread-safe; one lock, taken
 * only on this slow path.
 */
final class AdmissionQueue<T extends AdmissionQueue.Waiter> {

  /** What the queue needs to know of a waiting request. */
  interface Waiter {
    /** Requests of one group share endpoints (the requested model). */
    String group();

    String tenant();

    int priority();

    TrafficClass trafficClass();

    long deadlineNanos();
  }

  private record Level(boolean batch, int priority) implements Comparable<Level> {
    @Override
    public int compareTo(Level o) {
      if (batch != o.batch) {
        return batch ? 1 : -1;
      }
      return Integer.compare(o.priority, priority);
    }
  }

  /** One class and priority: a queue per tenant, served in turn. */
  private static final class Turns<T> {
    final LinkedHashMap<String, ArrayDeque<T>> byTenant = new LinkedHashMap<>();

    boolean isEmpty() {
      return byTenant.isEmpty();
    }

    void add(String tenant, T item) {
      byTenant.computeIfAbsent(tenant, k -> new ArrayDeque<>()).addLast(item);
    }

    void addFirst(String tenant, T item) {
      // The tenant keeps its turn: put it back at the front of the rotation.
      ArrayDeque<T> q = byTenant.remove(tenant);
      if (q == null) {
        q = new ArrayDeque<>();
      }
      q.addFirst(item);
      LinkedHashMap<String, ArrayDeque<T>> rest = new LinkedHashMap<>(byTenant);
      byTenant.clear();
      byTenant.put(tenant, q);
      byTenant.putAll(rest);
    }

    /** The next item in turn, removed; its tenant moves to the back of the rotation. */
    T poll() {
      Iterator<Map.Entry<String, ArrayDeque<T>>> it = byTenant.entrySet().iterator();
      Map.Entry<String, ArrayDeque<T>> first = it.next();
      T item = first.getValue().pollFirst();
      it.remove();
      if (!first.getValue().isEmpty()) {
        byTenant.put(first.getKey(), first.getValue());
      }
      return java.util.Objects.requireNonNull(item);
    }
  }

  private final int capacity;
  private final Map<String, NavigableMap<Level, Turns<T>>> groups = new LinkedHashMap<>();
  private int size;

  AdmissionQueue(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must not be negative: " + capacity);
    }
    this.capacity = capacity;
  }

  int capacity() {
    return capacity;
  }

  synchronized int size() {
    return size;
  }

  /** Adds a waiter; false if the queue is full. */
  synchronized boolean offer(T w) {
    if (size >= capacity) {
      return false;
    }
    levels(w.group()).computeIfAbsent(level(w), k -> new Turns<>()).add(w.tenant(), w);
    size++;
    return true;
  }

  /**
   * Hands waiters to {@code dispatch} in order, per group, while the group's next waiter can go: {@code canGo}
   * says whether its endpoints have capacity now. {@code dispatch} returns false if the waiter turned out blocked
   * after all (it is put back first in line and its group is skipped for this drain).
   *
   * @return the number dispatched
   */
  int drain(Predicate<T> canGo, Predicate<T> dispatch) {
    int dispatched = 0;
    List<String> groupNames;
    synchronized (this) {
      if (size == 0) {
        return 0;
      }
      groupNames = new ArrayList<>(groups.keySet());
    }
    for (String g : groupNames) {
      while (true) {
        T next;
        synchronized (this) {
          NavigableMap<Level, Turns<T>> levels = groups.get(g);
          if (levels == null || levels.isEmpty()) {
            break;
          }
          Map.Entry<Level, Turns<T>> top = levels.firstEntry();
          next = top.getValue().poll();
          if (top.getValue().isEmpty()) {
            levels.remove(top.getKey());
          }
          if (levels.isEmpty()) {
            groups.remove(g);
          }
          size--;
        }
        boolean went = canGo.test(next) && dispatch.test(next);
        if (!went) {
          putBack(next);
          break;
        }
        dispatched++;
      }
    }
    return dispatched;
  }

  /** Removes and returns every waiter whose deadline is at or before {@code nowNanos}. */
  synchronized List<T> expire(long nowNanos) {
    List<T> out = new ArrayList<>();
    if (size == 0) {
      return out;
    }
    for (var git = groups.values().iterator(); git.hasNext(); ) {
      NavigableMap<Level, Turns<T>> levels = git.next();
      for (var lit = levels.values().iterator(); lit.hasNext(); ) {
        Turns<T> turns = lit.next();
        for (var tit = turns.byTenant.values().iterator(); tit.hasNext(); ) {
          ArrayDeque<T> q = tit.next();
          q.removeIf(w -> {
            if (w.deadlineNanos() - nowNanos <= 0) {
              out.add(w);
              return true;
            }
            return false;
          });
          if (q.isEmpty()) {
            tit.remove();
          }
        }
        if (turns.isEmpty()) {
          lit.remove();
        }
      }
      if (levels.isEmpty()) {
        git.remove();
      }
    }
    size -= out.size();
    return out;
  }

  /** Removes a waiter (its client went away); false if it was not waiting. */
  synchronized boolean remove(T w) {
    NavigableMap<Level, Turns<T>> levels = groups.get(w.group());
    if (levels == null) {
      return false;
    }
    Turns<T> turns = levels.get(level(w));
    if (turns == null) {
      return false;
    }
    ArrayDeque<T> q = turns.byTenant.get(w.tenant());
    if (q == null || !q.remove(w)) {
      return false;
    }
    if (q.isEmpty()) {
      turns.byTenant.remove(w.tenant());
    }
    if (turns.isEmpty()) {
      levels.remove(level(w));
    }
    if (levels.isEmpty()) {
      groups.remove(w.group());
    }
    size--;
    return true;
  }

  private synchronized void putBack(T w) {
    levels(w.group()).computeIfAbsent(level(w), k -> new Turns<>()).addFirst(w.tenant(), w);
    size++;
  }

  private NavigableMap<Level, Turns<T>> levels(String group) {
    return groups.computeIfAbsent(group, k -> new TreeMap<>());
  }

  private static Level level(Waiter w) {
    return new Level(w.trafficClass() == TrafficClass.BATCH, w.priority());
  }
}
