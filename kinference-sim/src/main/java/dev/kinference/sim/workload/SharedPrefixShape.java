package dev.kinference.sim.workload;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of a {@link SharedPrefixWorkload}. Validated on construction; immutable.
 *
 * @param groups system prompts
 * @param promptsPerGroup users of each, each with a question of their own
 * @param systemPromptTokens a system prompt's length (0 for none)
 * @param questionTokens a question's length
 * @param outputTokens an answer's length
 */
public record SharedPrefixShape(int groups, int promptsPerGroup, int systemPromptTokens, int questionTokens,
    int outputTokens) {

  public SharedPrefixShape {
    if (groups < 1 || promptsPerGroup < 1 || systemPromptTokens < 0 || questionTokens < 1 || outputTokens < 1) {
      throw new IllegalArgumentException("invalid shared-prefix shape: " + groups + " groups x " + promptsPerGroup
          + " users, " + systemPromptTokens + " + " + questionTokens + " tokens in, " + outputTokens
          + " out (groups, users, question and output at least 1, system prompt at least 0)");
    }
    if ((long) groups * promptsPerGroup > 1_000_000) {
      throw new IllegalArgumentException("at most 1,000,000 prompts: " + groups + " x " + promptsPerGroup);
    }
  }

  /**
   * The shape written {@code GROUPS,USERS,SYSTEM,QUESTION,OUTPUT}, as five numbers in that order.
   *
   * @throws IllegalArgumentException for another count or an invalid shape
   */
  public static SharedPrefixShape of(List<Integer> values) {
    if (values.size() != 5) {
      throw new IllegalArgumentException("a shared-prefix shape is GROUPS,USERS,SYSTEM,QUESTION,OUTPUT (five "
          + "numbers), not " + values.size() + ": " + values);
    }
    return new SharedPrefixShape(values.get(0), values.get(1), values.get(2), values.get(3), values.get(4));
  }

  /** The workload of this shape. */
  public SharedPrefixWorkload workload(String model, @Nullable String tenant, long seed) {
    return new SharedPrefixWorkload(model, this, tenant, seed);
  }
}
