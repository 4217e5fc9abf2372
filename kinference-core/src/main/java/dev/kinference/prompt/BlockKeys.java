package dev.kinference.prompt;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The router's block-key hash chain: {@code key[i] = next(key[i-1], tokens of block i)}, with {@code key[-1]} a
 * seed derived from model, LoRA adapter and cache salt. Only full blocks get keys, as in vLLM's prefix cache.
 *
 * <p>A block's tokens are hashed on their own, as token pairs fed to four independent multiply-rotate lanes (so the
 * processor overlaps them, and the blocks of a prompt, instead of waiting on one long dependency chain); the block
 * hash is then combined with the parent key and the block size through MurmurHash3's 64-bit finaliser, a bijection,
 * so blocks with equal tokens and different parents never share a key. The hash is not cryptographic and needs no
 * secret seed, so every router replica computes the same keys. Key {@code 0} is never produced: indexes use it as
 * the empty marker. Stateless and thread-safe.
 */
public final class BlockKeys {

  /** vLLM's default block size. */
  public static final int DEFAULT_BLOCK_SIZE = 16;

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;

  private BlockKeys() {}

  /** The chain's seed for a model, LoRA adapter (or null) and cache salt (or null). */
  public static long seed(String model, @Nullable String lora, @Nullable String cacheSalt) {
    long h = P3;
    h = mixString(h, model);
    h = mixString(h ^ P1, lora == null ? "" : lora);
    h = mixString(h ^ P2, cacheSalt == null ? "" : cacheSalt);
    return nonZero(fmix64(h));
  }

  /** The key of the block {@code tokens[from, from + blockSize)} following the block keyed {@code parent}. */
  public static long next(long parent, int[] tokens, int from, int blockSize) {
    int end = from + blockSize;
    int i = from;
    long a = P1;
    long b = P2;
    long c = P3;
    long d = P4;
    for (; i + 8 <= end; i += 8) {
      a = round(a, pair(tokens, i));
      b = round(b, pair(tokens, i + 2));
      c = round(c, pair(tokens, i + 4));
      d = round(d, pair(tokens, i + 6));
    }
    long h = Long.rotateLeft(a, 1) + Long.rotateLeft(b, 7) + Long.rotateLeft(c, 12) + Long.rotateLeft(d, 18);
    for (; i + 1 < end; i += 2) {
      h = round(h, pair(tokens, i));
    }
    if (i < end) {
      h = round(h, tokens[i] & 0xFFFF_FFFFL);
    }
    return nonZero(fmix64(Long.rotateLeft(parent, 29) ^ h ^ (blockSize * P4)));
  }

  private static long pair(int[] tokens, int i) {
    return (tokens[i] & 0xFFFF_FFFFL) | ((long) tokens[i + 1] << 32);
  }

  private static long round(long acc, long lane) {
    return Long.rotateLeft(acc + lane * P2, 31) * P1;
  }

  /** The keys of every full block of {@code tokens[0, count)}. */
  public static long[] chain(long seed, int[] tokens, int count, int blockSize) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("blockSize must be positive: " + blockSize);
    }
    if (count < 0 || count > tokens.length) {
      throw new IllegalArgumentException("count out of range: " + count);
    }
    long[] keys = new long[count / blockSize];
    long parent = seed;
    for (int b = 0; b < keys.length; b++) {
      parent = next(parent, tokens, b * blockSize, blockSize);
      keys[b] = parent;
    }
    return keys;
  }

  /** MurmurHash3's 64-bit finaliser: every input bit affects every output bit. */
  static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xFF51AFD7ED558CCDL;
    k ^= k >>> 33;
    k *= 0xC4CEB9FE1A85EC53L;
    k ^= k >>> 33;
    return k;
  }

  private static long mixString(long h, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    h ^= bytes.length * P1;
    for (byte b : bytes) {
      h = Long.rotateLeft(h ^ (b & 0xFF), 27) * P1 + P4;
    }
    return h;
  }

  private static long nonZero(long h) {
    return h == 0 ? P3 : h;
  }
}
