package dev.kinference.jmh;

import dev.kinference.request.InferenceRequest;
import java.util.SplittableRandom;

/**
 * Chat prompts of a chosen length in tokens of the default {@code ApproximateTokenizer}: words of two to six
 * lowercase letters, each with its leading space one token, so {@code n} words are about {@code n} tokens.
 */
final class ChatPrompts {

  private ChatPrompts() {}

  /** {@code words} random words separated by single spaces. */
  static String words(long seed, int words) {
    SplittableRandom r = new SplittableRandom(seed);
    StringBuilder sb = new StringBuilder(words * 6);
    for (int w = 0; w < words; w++) {
      if (w > 0) {
        sb.append(' ');
      }
      int len = 2 + r.nextInt(5);
      for (int c = 0; c < len; c++) {
        sb.append((char) ('a' + r.nextInt(26)));
      }
    }
    return sb.toString();
  }

  /** A chat request: a system prompt and one user message. */
  static InferenceRequest chat(String system, String user) {
    return InferenceRequest.builder(Workloads.MODEL).system(system).user(user).build();
  }
}
