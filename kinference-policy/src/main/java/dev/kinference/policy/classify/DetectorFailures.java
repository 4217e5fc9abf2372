package dev.kinference.policy.classify;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * How often personal-data detectors failed (and the requests were treated as personal), by detector and reason,
 * since the process started. The gateway exposes it as {@code kinference_personal_data_detector_failures_total
 * {detector,reason}}. Thread-safe.
 */
public final class DetectorFailures {

  private static final ConcurrentHashMap<List<String>, LongAdder> COUNTS = new ConcurrentHashMap<>();

  private DetectorFailures() {}

  /** Counts one failure. */
  public static void record(String detector, String reason) {
    COUNTS.computeIfAbsent(List.of(detector, reason), k -> new LongAdder()).increment();
  }

  /** The failures of {@code detector} for {@code reason} so far. */
  public static long count(String detector, String reason) {
    LongAdder a = COUNTS.get(List.of(detector, reason));
    return a == null ? 0 : a.sum();
  }

  /** Every (detector, reason) counted so far with its count. */
  public static Map<List<String>, Long> snapshot() {
    Map<List<String>, Long> out = new java.util.TreeMap<>((a, b) -> {
      int c = a.get(0).compareTo(b.get(0));
      return c != 0 ? c : a.get(1).compareTo(b.get(1));
    });
    COUNTS.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
