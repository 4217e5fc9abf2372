package dev.kinference.sim.engine;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request as the engine receives it: already tokenized (the simulator's tokenizer is the core's
 * {@code ApproximateTokenizer}, so the router's precise prefix keys line up with the engine's blocks).
 *
 * <p>Output: {@code maxTokens} tokens, or fewer if {@code outputTokens} is given and shorter (the scripted answer
 * ends with the model's end-of-sequence token: {@link FinishReason#STOP}). Scripted output tokens are what the engine
 * generates and caches, so a multi-turn workload whose next prompt repeats the answer hits the cached blocks, as
 * it does on a real server. Without a script, output token ids are pseudo-random per request.
 *
 * @param id unique among the engine's active requests
 * @param promptTokens the prompt's token ids (not copied: do not modify after submitting)
 * @param maxTokens the output budget, at least 1
 * @param outputTokens the answer to generate, or null for pseudo-random tokens (not copied)
 * @param lora the LoRA adapter name, or null for the base model; part of the block hashes
 * @param cacheSalt vLLM's {@code cache_salt}, or null; part of the first block's hash
 */
@SuppressWarnings("ArrayRecordComponent") // token arrays are large and handed over, not shared state
public record SimRequest(String id, int[] promptTokens, int maxTokens, int @Nullable [] outputTokens,
    @Nullable String lora, @Nullable String cacheSalt) {

  public SimRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(promptTokens, "promptTokens");
    if (promptTokens.length == 0) {
      throw new IllegalArgumentException("request " + id + ": the prompt must have at least one token");
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("request " + id + ": maxTokens must be at least 1: " + maxTokens);
    }
    if (outputTokens != null && outputTokens.length == 0) {
      throw new IllegalArgumentException("request " + id + ": a scripted output must have at least one token");
    }
  }

  /** A request for {@code maxTokens} pseudo-random output tokens, base model, no salt. */
  public static SimRequest of(String id, int[] promptTokens, int maxTokens) {
    return new SimRequest(id, promptTokens, maxTokens, null, null, null);
  }

  /** Output tokens this request will produce if it is not aborted. */
  public int expectedOutputTokens() {
    return outputTokens == null ? maxTokens : Math.min(maxTokens, outputTokens.length);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SimRequest r && id.equals(r.id) && Arrays.equals(promptTokens, r.promptTokens)
        && maxTokens == r.maxTokens && Arrays.equals(outputTokens, r.outputTokens) && Objects.equals(lora, r.lora)
        && Objects.equals(cacheSalt, r.cacheSalt);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, Arrays.hashCode(promptTokens), maxTokens, Arrays.hashCode(outputTokens), lora, cacheSalt);
  }

  @Override
  public String toString() {
    return "SimRequest[" + id + ", prompt=" + promptTokens.length + " tokens, maxTokens=" + maxTokens
        + (outputTokens == null ? "" : ", scripted=" + outputTokens.length) + (lora == null ? "" : ", lora=" + lora)
        + "]";
  }
}
