package dev.kinference.policy.classify;

import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a {@link PersonalDataDetector} found: the kinds and how many occurrences. The values themselves are never
 * kept, so a verdict's trace never repeats personal data. Immutable.
 */
public record PersonalData(Set<PersonalDataKind> kinds, int occurrences) {

  public static final PersonalData NONE = new PersonalData(Set.of(), 0);

  public PersonalData {
    kinds = kinds.isEmpty() ? Set.of() : java.util.Collections.unmodifiableSet(EnumSet.copyOf(kinds));
    if (occurrences < 0) {
      throw new IllegalArgumentException("occurrences must not be negative");
    }
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
