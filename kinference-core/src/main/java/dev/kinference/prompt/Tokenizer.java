package dev.kinference.prompt;

import dev.kinference.plugin.Plugin;
import dev.kinference.request.InferenceRequest;

/**
 * Turns a request into the token ids its server would compute: chat template applied for chat requests, the
 * prompt as is for completions. The precise cache index only matches when these ids equal the server's.
 *
 * <p>Implementations must be thread-safe; {@link #tokenize} is called concurrently and should not block for long
 * (a remote tokenizer caches).
 */
public interface Tokenizer extends Plugin {

  /**
   * The token ids of the request's prompt.
   *
   * @throws TokenizationException when the request cannot be tokenized (never return a wrong answer instead)
   */
  int[] tokenize(InferenceRequest request) throws TokenizationException;
}
