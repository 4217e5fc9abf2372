package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request as a client sends it, with what the simulation needs besides: the prompt's token ids (under the
 * simulator's tokenizer, the core's {@code ApproximateTokenizer}), the text a character-based router hashes, and the
 * scripted answer.
 *
 * @param id unique within a run
 * @param request the request as a router sees it
 * @param promptTokens the prompt's token ids, as the server tokenizes it (not copied)
 * @param routingText the prompt as text, for routers that match characters (SGLang, llm-d's approximate prefix)
 * @param maxTokens output budget
 * @param scriptedOutput the answer's token ids (ending with the end-of-turn token), or null for random output
 * @param workload the workload (or sub-workload of a mix) that produced it
 * @param tenant the tenant, or null
 * @param sessionId the conversation, or null
 */
@SuppressWarnings("ArrayRecordComponent") // large arrays handed over once, never mutated
public record ClientRequest(String id, InferenceRequest request, int[] promptTokens, String routingText,
    int maxTokens, int @Nullable [] scriptedOutput, String workload, @Nullable String tenant,
    @Nullable String sessionId) {

  public ClientRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(promptTokens, "promptTokens");
    Objects.requireNonNull(routingText, "routingText");
    Objects.requireNonNull(workload, "workload");
    if (maxTokens < 1) {
      throw new IllegalArgumentException("maxTokens must be positive: " + maxTokens);
    }
  }

  /** Output tokens the request will produce. */
  public int expectedOutputTokens() {
    return scriptedOutput == null ? maxTokens : Math.min(maxTokens, scriptedOutput.length);
  }
}
