package dev.kinference.policy.classify;

import java.util.Locale;

/** How demanding a prompt is, as a {@link ComplexityClassifier} judges it. */
public enum Complexity {
  /** A short question or instruction a small model handles well. */
  SIMPLE,
  MODERATE,
  /** Long, code-heavy or reasoning-heavy: worth the large model. */
  COMPLEX;

  public String yamlName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
