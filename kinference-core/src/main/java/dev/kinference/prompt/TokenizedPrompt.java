package dev.kinference.prompt;

import dev.kinference.request.InferenceRequest;
import java.util.Arrays;

/**
 * A request's token ids under one tokenizer, and its prefix keys per block size (computed on first use).
 * Thread-safe: concurrent first uses may compute the same keys twice, never different ones.
 */
public final class TokenizedPrompt {

  private final Tokenizer tokenizer;
  private final int[] tokens;
  private final long seed;
  // Almost every fleet uses one block size: remember the last one asked for.
  private volatile PrefixKeys lastKeys;

  private TokenizedPrompt(Tokenizer tokenizer, int[] tokens, long seed) {
    this.tokenizer = tokenizer;
    this.tokens = tokens;
    this.seed = seed;
    this.lastKeys = PrefixKeys.of(seed, tokens, tokens.length, BlockKeys.DEFAULT_BLOCK_SIZE);
  }

  /** The tokenization of {@code request}; the key seed comes from its model, LoRA adapter and cache salt. */
  public static TokenizedPrompt of(Tokenizer tokenizer, int[] tokens, InferenceRequest request) {
    return new TokenizedPrompt(tokenizer, tokens.clone(),
        BlockKeys.seed(request.model(), request.lora(), request.cacheSalt()));
  }

  public Tokenizer tokenizer() {
    return tokenizer;
  }

  public int tokenCount() {
    return tokens.length;
  }

  public int tokenAt(int index) {
    return tokens[index];
  }

  /** A copy of the token ids. */
  public int[] tokens() {
    return tokens.clone();
  }

  /** The seed of the key chain. */
  public long seed() {
    return seed;
  }

  /** The prefix keys for blocks of {@code blockSize} tokens. */
  public PrefixKeys keys(int blockSize) {
    PrefixKeys k = lastKeys;
    if (k.blockSize() == blockSize) {
      return k;
    }
    k = PrefixKeys.of(seed, tokens, tokens.length, blockSize);
    lastKeys = k;
    return k;
  }

  @Override
  public String toString() {
    return "TokenizedPrompt[" + tokens.length + " tokens by " + tokenizer.name() + ": "
        + Arrays.toString(Arrays.copyOf(tokens, Math.min(8, tokens.length))) + "...]";
  }
}
