package dev.kinference.policy.classify;

import dev.kinference.plugin.Plugin;
import dev.kinference.request.InferenceRequest;

/**
 * Judges how demanding a prompt is, so that rules can send simple prompts to a cheaper model. Implementations must
 * be thread-safe and must not throw for any request.
 */
public interface ComplexityClassifier extends Plugin {

  /**
   * The class of {@code request}.
   *
   * @param promptTokens the request's estimated input tokens
   */
  PromptClass classify(InferenceRequest request, int promptTokens);
}
