package dev.kinference.policy.classify;

import java.util.Objects;
import java.util.Set;

/**
 * A {@link ComplexityClassifier}'s judgement of a prompt. Immutable.
 *
 * @param complexity the class
 * @param topics topic names such as {@code code}, {@code math}, {@code reasoning}, {@code translation},
 *     {@code summarization}, {@code chat}
 * @param reason the features that decided it, for traces
 */
public record PromptClass(Complexity complexity, Set<String> topics, String reason) {

  public PromptClass {
    Objects.requireNonNull(complexity, "complexity");
    Objects.requireNonNull(reason, "reason");
    topics = Set.copyOf(topics);
  }
}
