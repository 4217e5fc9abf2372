package dev.kinference.vllm.kvevents;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.testkit.CacheIndexContract;

/** {@link HybridCacheIndex} passes the kit every cache index must pass. */
class HybridCacheIndexContractTest extends CacheIndexContract {

  @Override
  protected CacheIndex createIndex() {
    return HybridCacheIndex.wrap(new PreciseCacheIndex());
  }
}
