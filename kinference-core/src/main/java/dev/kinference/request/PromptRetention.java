package dev.kinference.request;

import java.time.Duration;
import java.util.Objects;

/**
 * How long the client asked that the start of its prompt stay cached, and how much of the prompt that covers: from
 * Anthropic's {@code cache_control} breakpoints ({@code ttl} {@code 5m}, the default, or {@code 1h}) and OpenAI's
 * {@code prompt_cache_retention: "24h"}. vLLM itself keeps blocks by recency alone, so this is a hint about reuse the
 * router's approximate index uses to remember that prefix longer than its own time-to-live; a precise index, which
 * follows the servers' events, ignores it.
 *
 * <p>{@code prefixShare} is the share of the prompt's text, in the order the model reads it (tools, system, messages),
 * up to the end of the breakpoint's block; the index maps it to the same share of the prompt's blocks.
 *
 * @param ttl how long the prefix should be remembered after this request; positive
 * @param prefixShare the share of the prompt covered, in (0, 1]
 */
public record PromptRetention(Duration ttl, double prefixShare) {

  /** The longest retention honoured: OpenAI's extended caching. Longer values are clamped to it. */
  public static final Duration MAX_TTL = Duration.ofHours(24);

  public PromptRetention {
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    if (!(prefixShare > 0 && prefixShare <= 1)) {
      throw new IllegalArgumentException("prefixShare must be in (0, 1]: " + prefixShare);
    }
    if (ttl.compareTo(MAX_TTL) > 0) {
      ttl = MAX_TTL;
    }
  }

  /** The number of leading blocks of a prompt of {@code blocks} full blocks that this retention covers. */
  public int coveredBlocks(int blocks) {
    return (int) Math.min(blocks, Math.ceil(prefixShare * blocks - 1e-9));
  }
}
