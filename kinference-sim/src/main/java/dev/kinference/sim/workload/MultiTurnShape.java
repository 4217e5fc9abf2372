package dev.kinference.sim.workload;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of a {@link MultiTurnWorkload}. Validated on construction; immutable.
 *
 * @param systemPrompts applications, each with its own system prompt shared by its conversations
 * @param systemPromptTokens a system prompt's length (0 for none)
 * @param minTurns the fewest turns of a conversation
 * @param maxTurns the most turns of a conversation
 * @param userTokens a user message's length, about
 * @param answerTokens an answer's length
 * @param thinkTime the mean pause between an answer and the next message (exponentially distributed)
 */
public record MultiTurnShape(int systemPrompts, int systemPromptTokens, int minTurns, int maxTurns, int userTokens,
    int answerTokens, Duration thinkTime) {

  public MultiTurnShape {
    Objects.requireNonNull(thinkTime, "thinkTime");
    if (systemPrompts < 1 || systemPromptTokens < 0 || minTurns < 1 || maxTurns < minTurns || userTokens < 1
        || answerTokens < 1 || thinkTime.isNegative()) {
      throw new IllegalArgumentException("invalid multi-turn shape: " + systemPrompts + " system prompts of "
          + systemPromptTokens + " tokens, " + minTurns + "-" + maxTurns + " turns of " + userTokens + " + "
          + answerTokens + " tokens, think time " + thinkTime.toMillis() + " ms (system prompts, turns, message and "
          + "answer at least 1, turns min <= max, nothing negative)");
    }
  }

  /**
   * The shape written {@code APPS,SYSTEM,MIN_TURNS,MAX_TURNS,MESSAGE,ANSWER,THINK_MS}, as seven numbers in that order
   * (the think time in milliseconds).
   *
   * @throws IllegalArgumentException for another count or an invalid shape
   */
  public static MultiTurnShape of(List<Integer> values) {
    if (values.size() != 7) {
      throw new IllegalArgumentException("a multi-turn shape is APPS,SYSTEM,MIN_TURNS,MAX_TURNS,MESSAGE,ANSWER,"
          + "THINK_MS (seven numbers), not " + values.size() + ": " + values);
    }
    return new MultiTurnShape(values.get(0), values.get(1), values.get(2), values.get(3), values.get(4),
        values.get(5), Duration.ofMillis(values.get(6)));
  }

  /** The workload of this shape. */
  public MultiTurnWorkload workload(String model, @Nullable String tenant, long seed) {
    return new MultiTurnWorkload(model, this, tenant, seed);
  }
}
