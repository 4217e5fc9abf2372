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
  private int[] spans = new int[16];
  private int spanCount;
  private int count;
  private int[] postal = new int[0];
  private int postalCount;

  void add(PersonalDataKind kind, int start, int end) {
    kinds.add(kind);
    count++;
    if (found.size() < PersonalData.MAX_FINDINGS) {
      found.add(new PersonalDataFinding(kind, "builtin", "", start));
    }
    if (spanCount * 2 + 2 > spans.length) {
      spans = java.util.Arrays.copyOf(spans, spans.length * 2);
    }
    spans[spanCount * 2] = start;
    spans[spanCount * 2 + 1] = end;
    spanCount++;
  }

  /** Whether {@code [start, end)} overlaps something already found. */
  boolean claimed(int start, int end) {
    for (int i = 0; i < spanCount; i++) {
      if (start < spans[i * 2 + 1] && spans[i * 2] < end) {
        return true;
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
