package dev.kinference.policy.classify;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a {@link PersonalDataDetector} found: the kinds, how many occurrences, and where (the first {@value
 * #MAX_FINDINGS} findings: kind, detector, field and offset). The values themselves are never kept, so a verdict's
 * trace never repeats personal data. Immutable.
 */
public record PersonalData(Set<PersonalDataKind> kinds, int occurrences, List<PersonalDataFinding> findings) {

  /** Findings kept at most; {@link #occurrences} counts them all. */
  public static final int MAX_FINDINGS = 32;

  public static final PersonalData NONE = new PersonalData(Set.of(), 0);

  public PersonalData {
    kinds = kinds.isEmpty() ? Set.of() : java.util.Collections.unmodifiableSet(EnumSet.copyOf(kinds));
    if (occurrences < 0) {
      throw new IllegalArgumentException("occurrences must not be negative");
    }
    findings = findings.size() > MAX_FINDINGS ? List.copyOf(findings.subList(0, MAX_FINDINGS))
        : List.copyOf(findings);
  }

  /** Kinds and a count without locations. */
  public PersonalData(Set<PersonalDataKind> kinds, int occurrences) {
    this(kinds, occurrences, List.of());
  }

  /** Every finding's field prefixed with {@code path} (see {@link PersonalDataFinding#in}). */
  public PersonalData in(String path) {
    if (findings.isEmpty()) {
      return this;
    }
    return new PersonalData(kinds, occurrences, findings.stream().map(f -> f.in(path)).toList());
  }

  /** Both together. */
  public PersonalData plus(PersonalData other) {
    if (!other.found()) {
      return this;
    }
    if (!found()) {
      return other;
    }
    EnumSet<PersonalDataKind> all = EnumSet.copyOf(kinds);
    all.addAll(other.kinds);
    List<PersonalDataFinding> where = new java.util.ArrayList<>(findings);
    where.addAll(other.findings);
    return new PersonalData(all, occurrences + other.occurrences, where);
  }

  /** Whether anything was found. */
  public boolean found() {
    return !kinds.isEmpty();
  }

  /** The kinds in YAML spelling, such as {@code email, payment-card}. */
  public String describe() {
    return kinds.stream().map(PersonalDataKind::yamlName).collect(Collectors.joining(", "));
  }
}
