package dev.kinference.sim.engine;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The engine's prefix-cache block hash: {@code hash(parent or NONE_HASH, block tokens, extra keys)}, like vLLM's
 * {@code hash_block_tokens}, with a per-engine seed in the role of {@code PYTHONHASHSEED}. Deliberately a different
 * function from the router's {@code BlockKeys}: a router must map engine hashes to its own keys through the token
 * ids of {@code BlockStored} events, never assume they are equal. Never returns 0. Stateless and thread-safe.
 */
final class EngineHasher {

  private final long noneHash;

  EngineHasher(long seed) {
    this.noneHash = nonZero(mix(seed ^ 0x5851F42D4C957F2DL));
  }

  /**
   * The hash of {@code tokens[from, from + blockSize)} after {@code parent} (0 at the start of a sequence). The
   * first block also mixes in the LoRA adapter and the cache salt; later blocks inherit them through the chain.
   */
  long hash(long parent, int[] tokens, int from, int blockSize, @Nullable String lora, @Nullable String cacheSalt) {
    long h;
    if (parent == 0) {
      h = noneHash;
      if (lora != null) {
        h = mixString(h ^ 0x1F, lora);
      }
      if (cacheSalt != null) {
        h = mixString(h ^ 0x2F, cacheSalt);
      }
    } else {
      h = parent;
    }
    h ^= 0xD6E8FEB86659FD93L * blockSize;
    for (int i = from; i < from + blockSize; i++) {
      h = mix(h + (tokens[i] & 0xFFFF_FFFFL) * 0xA0761D6478BD642FL);
    }
    return nonZero(h);
  }

  /** SplitMix64's finaliser. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static long mixString(long h, String s) {
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h = mix(h ^ (b & 0xFF));
    }
    return h;
  }

  private static long nonZero(long h) {
    return h == 0 ? 0x2545F4914F6CDD1DL : h;
  }
}
