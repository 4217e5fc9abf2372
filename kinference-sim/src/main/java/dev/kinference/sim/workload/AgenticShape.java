package dev.kinference.sim.workload;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The parameters of an {@link AgenticWorkload}: coding-agent sessions after inference-perf's code-generation entry.
 * Validated on construction; immutable.
 *
 * @param systemPromptTokens the agent's system prompt (instructions and tool definitions), shared by every session
 * @param meanContextTokens mean of a session's own context (repository files, the task), lognormal
 * @param minTurns the fewest turns of a session
 * @param maxTurns the most turns of a session
 * @param toolOutputTokens mean tool output appended after each answer (exponential)
 * @param answerTokens mean answer (a tool call or a reply; exponential)
 * @param toolLatency mean time a tool runs between an answer and the next turn (exponential)
 * @param forkPercent the chance in percent that a turn of a top-level session forks a subagent
 * @param subagentMaxTurns the most turns of a subagent (it runs at least {@code minTurns})
 * @param maxContextTokens the longest prompt plus answer a session may reach (the servers' max_model_len); a session
 *     that would grow past it ends there, as an agent compacts or stops
 */
public record AgenticShape(int systemPromptTokens, int meanContextTokens, int minTurns, int maxTurns,
    int toolOutputTokens, int answerTokens, Duration toolLatency, int forkPercent, int subagentMaxTurns,
    int maxContextTokens) {

  /** Spread of the lognormal context size: a tenth of the sessions bring more than twice the mean. */
  static final double CONTEXT_SIGMA = 0.6;

  public AgenticShape {
    Objects.requireNonNull(toolLatency, "toolLatency");
    if (systemPromptTokens < 1 || meanContextTokens < 1 || minTurns < 1 || maxTurns < minTurns
        || toolOutputTokens < 1 || answerTokens < 1 || toolLatency.isNegative() || forkPercent < 0
        || forkPercent > 100 || subagentMaxTurns < minTurns
        || maxContextTokens < systemPromptTokens + 4 * answerTokens + 1024) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, "invalid agentic shape: system prompt %d, "
          + "context %d, turns %d-%d, tool output %d, answer %d, tool latency %d ms, fork %d%%, subagent turns up to "
          + "%d, max context %d (lengths and turns at least 1, turns min <= max <= subagent max or min <= subagent "
          + "max, fork 0-100%%, max context at least the system prompt + 4 answers + 1,024)",
          systemPromptTokens, meanContextTokens, minTurns, maxTurns, toolOutputTokens, answerTokens,
          toolLatency.toMillis(), forkPercent, subagentMaxTurns, maxContextTokens));
    }
  }

  /**
   * The coding-agent shape: a 3,000-token system prompt, 55,000-token contexts on average, 2-20 turns, 1,000-token
   * tool outputs and 300-token answers, 2 s of tool latency, a subagent forked on 10% of a session's turns (2-8
   * turns of its own), sessions up to {@code maxContextTokens}.
   */
  public static AgenticShape codingAgent(int maxContextTokens) {
    return new AgenticShape(3_000, 55_000, 2, 20, 1_000, 300, Duration.ofSeconds(2), 10, 8, maxContextTokens);
  }

  /**
   * The shape written {@code SYSTEM,CONTEXT,MIN_TURNS,MAX_TURNS,TOOL_OUTPUT,ANSWER,TOOL_MS,FORK_PERCENT}, eight numbers
   * in that order; subagents keep up to 8 turns (or {@code MAX_TURNS} if fewer).
   *
   * @throws IllegalArgumentException for another count or an invalid shape
   */
  public static AgenticShape of(List<Integer> values, int maxContextTokens) {
    if (values.size() != 8) {
      throw new IllegalArgumentException("an agentic shape is SYSTEM,CONTEXT,MIN_TURNS,MAX_TURNS,TOOL_OUTPUT,ANSWER,"
          + "TOOL_MS,FORK_PERCENT (eight numbers), not " + values.size() + ": " + values);
    }
    int min = values.get(2);
    int max = values.get(3);
    return new AgenticShape(values.get(0), values.get(1), min, max, values.get(4), values.get(5),
        Duration.ofMillis(values.get(6)), values.get(7), Math.max(min, Math.min(8, max)), maxContextTokens);
  }

  /** This shape with sessions cut at {@code tokens} (a fleet's max_model_len). */
  public AgenticShape withMaxContextTokens(int tokens) {
    return new AgenticShape(systemPromptTokens, meanContextTokens, minTurns, maxTurns, toolOutputTokens,
        answerTokens, toolLatency, forkPercent, subagentMaxTurns, tokens);
  }

  /** The workload of this shape. */
  public AgenticWorkload workload(String model, long seed) {
    return new AgenticWorkload(model, this, seed);
  }
}
