package dev.kinference.cache;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A change to one server's KV-cache block pool, as vLLM publishes it (see {@code vllm/distributed/kv_events.py}).
 * Block hashes are the engine's own 64-bit values (digests reduced to their last 8 bytes, big-endian); they are
 * mapped to router keys by the index, never interpreted.
 */
public sealed interface KvEvent permits KvEvent.BlockStored, KvEvent.BlockRemoved, KvEvent.AllBlocksCleared {

  /** The tier a block lives in. GPU blocks serve prefix hits directly; CPU (offloaded) blocks must be loaded. */
  enum Medium {
    GPU,
    CPU,
    OTHER;

    /** vLLM's medium string ({@code null} means GPU). */
    public static Medium parse(@Nullable String medium) {
      if (medium == null || medium.equalsIgnoreCase("GPU") || medium.equalsIgnoreCase("cuda")) {
        return GPU;
      }
      return medium.equalsIgnoreCase("CPU") ? CPU : OTHER;
    }
  }

  /**
   * New full blocks were stored.
   *
   * @param blockHashes the engine hashes of the new blocks, in chain order
   * @param parentBlockHash the engine hash of the block before the first new one, or null at the sequence start
   * @param tokenIds all new blocks' tokens concatenated ({@code blockHashes.length * blockSize} of them), or empty
   *     when the server did not send them (CPU offload)
   * @param blockSize tokens per block
   * @param loraName the LoRA adapter, or null for the base model
   * @param cacheSalt the {@code cache_salt} found in the first block's extra keys, or null
   */
  @SuppressWarnings("ArrayRecordComponent") // ingest is hot: no defensive copies; equals/hashCode compare contents
  record BlockStored(long[] blockHashes, @Nullable Long parentBlockHash, int[] tokenIds, int blockSize,
      @Nullable String loraName, Medium medium, @Nullable String cacheSalt) implements KvEvent {

    public BlockStored {
      Objects.requireNonNull(blockHashes, "blockHashes");
      Objects.requireNonNull(tokenIds, "tokenIds");
      Objects.requireNonNull(medium, "medium");
      if (blockSize < 1) {
        throw new IllegalArgumentException("blockSize must be positive: " + blockSize);
      }
    }

    /** Whether the event carries the tokens of every block, so router keys can be computed. */
    public boolean hasTokens() {
      return tokenIds.length >= blockHashes.length * (long) blockSize;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof BlockStored b && Arrays.equals(blockHashes, b.blockHashes)
          && Objects.equals(parentBlockHash, b.parentBlockHash) && Arrays.equals(tokenIds, b.tokenIds)
          && blockSize == b.blockSize && Objects.equals(loraName, b.loraName) && medium == b.medium
          && Objects.equals(cacheSalt, b.cacheSalt);
    }

    @Override
    public int hashCode() {
      return Objects.hash(Arrays.hashCode(blockHashes), parentBlockHash, Arrays.hashCode(tokenIds), blockSize,
          loraName, medium, cacheSalt);
    }

    @Override
    public String toString() {
      return "BlockStored[blocks=" + blockHashes.length + ", parent=" + parentBlockHash + ", tokens="
          + tokenIds.length + ", blockSize=" + blockSize + ", lora=" + loraName + ", medium=" + medium + "]";
    }
  }

  /** Blocks were evicted. */
  @SuppressWarnings("ArrayRecordComponent") // ingest is hot: no defensive copies; equals/hashCode compare contents
  record BlockRemoved(long[] blockHashes, Medium medium) implements KvEvent {

    public BlockRemoved {
      Objects.requireNonNull(blockHashes, "blockHashes");
      Objects.requireNonNull(medium, "medium");
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof BlockRemoved b && Arrays.equals(blockHashes, b.blockHashes) && medium == b.medium;
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(blockHashes) + medium.hashCode();
    }

    @Override
    public String toString() {
      return "BlockRemoved[blocks=" + blockHashes.length + ", medium=" + medium + "]";
    }
  }

  /** The server dropped its whole cache (reset, or a restart detected by the subscriber). */
  record AllBlocksCleared() implements KvEvent {}
}
