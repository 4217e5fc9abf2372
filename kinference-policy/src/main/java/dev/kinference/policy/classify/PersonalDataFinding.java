package dev.kinference.policy.classify;

import java.util.Objects;

/**
 * Where one piece of personal data was found, never what it was: its kind, the detector that found it, the request
 * field it was in (such as {@code messages[2].content[0].text}, {@code user}, {@code metadata.customer}, {@code
 * tools[0].function.description}; empty for bare text) and the character offset in that field's text.
 *
 * @param kind what was found
 * @param detector the name of the detector that found it ({@code builtin}, {@code presidio}, ...)
 * @param field the field path, or empty
 * @param offset where in the field's text it starts (0 when unknown)
 */
public record PersonalDataFinding(PersonalDataKind kind, String detector, String field, int offset) {

  public PersonalDataFinding {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(detector, "detector");
    Objects.requireNonNull(field, "field");
    if (offset < 0) {
      throw new IllegalArgumentException("offset must not be negative");
    }
  }

  /** This finding in {@code path}: its field path prefixed (a finding in bare text takes the path itself). */
  public PersonalDataFinding in(String path) {
    return new PersonalDataFinding(kind, detector, field.isEmpty() ? path : path + "." + field, offset);
  }

  /** {@code email by builtin at messages[0].content+17}. */
  public String describe() {
    return kind.yamlName() + " by " + detector + (field.isEmpty() ? "" : " at " + field) + "+" + offset;
  }
}
