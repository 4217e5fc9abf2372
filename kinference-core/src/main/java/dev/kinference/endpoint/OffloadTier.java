package dev.kinference.endpoint;

import dev.kinference.prompt.PrefixKeys;

/**
 * An endpoint's slower KV-cache tier (host memory behind vLLM's offloading connector) as routing sees it: how far a
 * prompt's prefix continues there after its GPU hit, and what loading it back costs. A prefix found here is
 * cheaper than recomputing it and dearer than a GPU hit. Implementations are thread-safe.
 */
public interface OffloadTier {

  /** How many blocks of {@code keys}, from block {@code from} on (the end of the GPU hit), the tier holds in a row. */
  int blocksAfter(PrefixKeys keys, int from);

  /** Seconds to load {@code tokens} prompt tokens from this tier back to the GPU. */
  double reloadSeconds(int tokens);
}
