/**
 * Which endpoint holds which prefix blocks. A {@link dev.kinference.cache.CacheIndex} answers, for a prompt's
 * {@link dev.kinference.prompt.PrefixKeys}, how many leading blocks each candidate endpoint holds. Two built-ins:
 * {@link dev.kinference.cache.PreciseCacheIndex}, fed by the servers' own KV-cache events
 * ({@link dev.kinference.cache.KvEvent}), and {@link dev.kinference.cache.ApproximateCacheIndex}, fed by the
 * router's own decisions.
 *
 * <h2>Concurrency</h2>
 * Both built-ins let any number of threads look up while other threads apply events or decisions: lookups take no
 * lock (they read each of the 64 table segments optimistically under its version, a sequence lock, and read again
 * if a writer intervened) and allocate nothing. Events of one endpoint must be applied by one thread at a time, in
 * order; events of different endpoints may be applied in parallel.
 */
@NullMarked
package dev.kinference.cache;

import org.jspecify.annotations.NullMarked;
