package dev.kinference.sim.server;

import dev.kinference.prompt.ApproximateTokenizer;
import java.util.SplittableRandom;

/**
 * The text a simulated server generates: words of at most six letters, each preceded by a space, so that every
 * word is exactly one token under {@link ApproximateTokenizer}. A conversation that sends the answer back in its
 * next turn therefore repeats the very token ids the server generated, and can hit the blocks the server cached
 * while decoding, as with a real model.
 *
 * <p>Immutable and thread-safe.
 */
final class SyntheticText {

  private static final String[] WORDS = {
      "the", "model", "router", "cache", "prefix", "token", "server", "block", "fleet", "query",
      "answer", "paris", "river", "light", "green", "stone", "quick", "brown", "fox", "jumps",
      "over", "lazy", "dog", "ocean", "cloud", "rain", "north", "south", "east", "west",
      "apple", "orange", "lemon", "pear", "plum", "grape", "melon", "berry", "honey", "bread",
      "water", "fire", "earth", "wind", "metal", "wood", "glass", "paper", "chair", "table",
      "house", "city", "road", "bridge", "tower", "garden", "forest", "hill", "valley", "lake",
      "sun", "moon", "star", "sky"};

  private final int[] ids;
  private final String[] pieces;

  SyntheticText(ApproximateTokenizer tokenizer) {
    ids = new int[WORDS.length];
    pieces = new String[WORDS.length];
    for (int i = 0; i < WORDS.length; i++) {
      pieces[i] = " " + WORDS[i];
      int[] encoded = tokenizer.encode(pieces[i]);
      if (encoded.length != 1) {
        throw new IllegalStateException("'" + pieces[i] + "' is not one token");
      }
      ids[i] = encoded[0];
    }
  }

  /** {@code count} word indexes drawn deterministically from {@code seed}. */
  int[] words(long seed, int count) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] out = new int[count];
    for (int i = 0; i < count; i++) {
      out[i] = random.nextInt(WORDS.length);
    }
    return out;
  }

  /** The token ids of these words. */
  int[] tokenIds(int[] words) {
    int[] out = new int[words.length];
    for (int i = 0; i < words.length; i++) {
      out[i] = ids[words[i]];
    }
    return out;
  }

  /** The text of {@code words[from, to)}. */
  String text(int[] words, int from, int to) {
    StringBuilder sb = new StringBuilder((to - from) * 7);
    for (int i = from; i < to; i++) {
      sb.append(pieces[words[i]]);
    }
    return sb.toString();
  }
}
