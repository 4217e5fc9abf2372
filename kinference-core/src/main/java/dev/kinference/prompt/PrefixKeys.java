package dev.kinference.prompt;

/**
 * The block keys of one prompt for one block size. Immutable and thread-safe; accessors do not copy, so the hot
 * path reads keys without allocating.
 */
public final class PrefixKeys {

  private final long[] keys;
  private final int blockSize;
  private final int tokenCount;

  private PrefixKeys(long[] keys, int blockSize, int tokenCount) {
    this.keys = keys;
    this.blockSize = blockSize;
    this.tokenCount = tokenCount;
  }

  /** Keys of {@code tokens[0, count)} under {@code seed}. */
  public static PrefixKeys of(long seed, int[] tokens, int count, int blockSize) {
    return new PrefixKeys(BlockKeys.chain(seed, tokens, count, blockSize), blockSize, count);
  }

  /** Wraps keys computed elsewhere (tests, benchmarks, traces); the array is copied. */
  public static PrefixKeys ofKeys(long[] keys, int blockSize, int tokenCount) {
    if (blockSize < 1 || tokenCount < keys.length * (long) blockSize) {
      throw new IllegalArgumentException("tokenCount " + tokenCount + " is less than " + keys.length + " blocks of "
          + blockSize);
    }
    return new PrefixKeys(keys.clone(), blockSize, tokenCount);
  }

  /** Number of full blocks. */
  public int size() {
    return keys.length;
  }

  public long key(int block) {
    return keys[block];
  }

  public int blockSize() {
    return blockSize;
  }

  /** Tokens in the prompt, including the partial last block that has no key. */
  public int tokenCount() {
    return tokenCount;
  }

  /**
   * The number of leading blocks this prompt shares with {@code other}: blocks whose keys are equal from the first
   * on (keys chain, so equal keys mean equal prefixes). 0 when the block sizes differ.
   */
  public int sharedLeadingBlocks(PrefixKeys other) {
    if (other.blockSize != blockSize) {
      return 0;
    }
    int n = Math.min(keys.length, other.keys.length);
    int firstDifferent = java.util.Arrays.mismatch(keys, 0, n, other.keys, 0, n);
    return firstDifferent < 0 ? n : firstDifferent;
  }

  /** A copy of the keys. */
  public long[] toArray() {
    return keys.clone();
  }
}
