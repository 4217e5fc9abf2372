package dev.kinference.sim.workload;

import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import dev.kinference.request.ContentPart;
import java.util.SplittableRandom;

/**
 * Prompt text and token ids as the simulated servers see them. Text is made of pseudo-random lower-case words of
 * two to six letters, each exactly one token under {@link ApproximateTokenizer}, so a text of {@code n} words is
 * {@code n} tokens. Thread-safe.
 */
public final class Prompts {

  /**
   * The tokenizer every simulated server uses. Routers under test should use this instance: a request remembers
   * its tokenization per tokenizer instance, so it is tokenized once per run instead of once per router call.
   */
  public static final ApproximateTokenizer TOKENIZER = new ApproximateTokenizer();

  /** The id the chat template puts after each message, which is also the token a model ends its answer with. */
  public static final int END_OF_TURN = endOfTurn();

  private static final char[] LETTERS = "abcdefghijklmnopqrstuvwxyz".toCharArray();

  private Prompts() {}

  /** {@code tokens} words from {@code seed}; the same seed gives the same text. */
  public static String text(long seed, int tokens) {
    SplittableRandom r = new SplittableRandom(seed);
    StringBuilder sb = new StringBuilder(tokens * 6);
    for (int i = 0; i < tokens; i++) {
      if (i > 0) {
        sb.append(' ');
      }
      int len = 2 + r.nextInt(5);
      for (int k = 0; k < len; k++) {
        sb.append(LETTERS[r.nextInt(LETTERS.length)]);
      }
    }
    return sb.toString();
  }

  /** The server-side token ids of a request. */
  public static int[] tokens(InferenceRequest request) {
    try {
      return request.tokenize(TOKENIZER).tokens();
    } catch (TokenizationException e) {
      throw new IllegalStateException("the approximate tokenizer does not fail", e);
    }
  }

  /** What a model generates to answer with {@code answer}: its tokens, then the end-of-turn token. */
  public static int[] answerTokens(String answer) {
    int[] words = TOKENIZER.encode(answer);
    int[] out = java.util.Arrays.copyOf(words, words.length + 1);
    out[words.length] = END_OF_TURN;
    return out;
  }

  /** The text a character-matching router hashes: each message's role and text, one per line. */
  public static String routingText(InferenceRequest request) {
    String prompt = request.prompt();
    if (prompt != null) {
      return prompt;
    }
    int[] ids = request.promptTokenIds();
    if (ids != null) {
      return tokenText(ids);
    }
    StringBuilder sb = new StringBuilder((int) Math.min(Integer.MAX_VALUE - 64, request.promptChars() + 64));
    for (Message m : request.messages()) {
      sb.append(m.role()).append(": ");
      for (ContentPart p : m.content()) {
        if (p instanceof ContentPart.Text t) {
          sb.append(t.text());
        }
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /** Token ids as text for character-matching routers: two characters a token. */
  public static String tokenText(int[] ids) {
    char[] out = new char[ids.length * 2];
    for (int i = 0; i < ids.length; i++) {
      out[2 * i] = (char) (ids[i] >>> 16);
      out[2 * i + 1] = (char) ids[i];
    }
    return new String(out);
  }

  private static int endOfTurn() {
    InferenceRequest probe = InferenceRequest.builder("probe").user("x").build();
    int[] ids = new ApproximateTokenizer().tokenize(probe);
    // [user marker, "x", end marker, assistant marker]
    return ids[2];
  }
}
