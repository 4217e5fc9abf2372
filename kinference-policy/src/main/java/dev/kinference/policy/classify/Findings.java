package dev.kinference.policy.classify;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * What the families found in one text so far: kinds, count, findings (offset into the normalised text) and the
 * spans already claimed, so that a card number is not also a phone number. One per call; not thread-safe.
 */
final class Findings {

  private final EnumSet<PersonalDataKind> kinds = EnumSet.noneOf(PersonalDataKind.class);
  private final List<PersonalDataFinding> found = new ArrayList<>();
  /** Characters of the normalised text already found (constant-time overlap tests whatever the count). */
  private final java.util.BitSet claimed = new java.util.BitSet();
  private int count;
  private int[] postal = new int[0];
  private int postalCount;

  void add(PersonalDataKind kind, int start, int end) {
    kinds.add(kind);
    count++;
    if (found.size() < PersonalData.MAX_FINDINGS) {
      found.add(new PersonalDataFinding(kind, "builtin", "", start));
    }
    claimed.set(start, Math.max(end, start + 1));
  }

  /** Whether {@code [start, end)} overlaps something already found. */
  boolean claimed(int start, int end) {
    for (int i = start; i < Math.max(end, start + 1); i++) {
      if (claimed.get(i)) {
        return true; // spans are short: a loop, not nextSetBit, which could scan far past them
      }
    }
    return false;
  }

  /** A postal code beside a city at {@code at} (scratch for {@link Addresses}, not a finding). */
  void postal(int at) {
    if (postalCount == postal.length) {
      postal = java.util.Arrays.copyOf(postal, Math.max(4, postalCount * 2));
    }
    postal[postalCount++] = at;
  }

  int[] postalCodes() {
    return java.util.Arrays.copyOf(postal, postalCount);
  }

  boolean has(PersonalDataKind kind) {
    return kinds.contains(kind);
  }

  PersonalData result() {
    if (count == 0) {
      return PersonalData.NONE;
    }
    found.sort(java.util.Comparator.comparingInt(PersonalDataFinding::offset));
    return new PersonalData(kinds, count, found);
  }
}
