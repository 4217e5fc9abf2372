package dev.kinference.sim.engine;

import java.util.Arrays;

/** One request inside the engine: its tokens, blocks, progress and timings. Not thread-safe. */
final class Sequence {

  final SimRequest request;
  final RequestListener listener;
  final long arrivalNanos;
  final int promptLength;
  final int outputLimit;
  final long outputSeed;

  int[] tokens;
  int numTokens;
  int numComputed;
  int numOutput;

  long[] blockHashes = new long[8];
  int numHashed;

  int[] blocks = new int[8];
  int numBlocks;
  int numCachedBlocks;
  /** The sliding-window group's block table (a hybrid model's group 1); 0, the null block, where freed. */
  int[] windowBlocks = new int[0];
  int numWindowBlocks;
  int[] stateBlocks = new int[0];
  /** A Mamba model's last checkpoint: one block a Mamba group holding the state at a block boundary, or empty. */
  int[] checkpointBlocks = new int[0];
  /** The block (of the sequence) whose end the running Mamba state blocks stand for, or -1. */
  int stateIndex = -1;

  int cachedTokens = -1;
  /** Tokens of its prefix loaded (or loading) from the offload tier since it was last admitted; 0 if none. */
  int loadedTokens;
  long loadDoneNanos = -1;
  int preemptions;
  long firstTokenNanos = -1;
  long lastTokenNanos = -1;
  int scheduledTokens;
  boolean running;
  boolean finished;

  Sequence(SimRequest request, RequestListener listener, long arrivalNanos, long outputSeed) {
    this.request = request;
    this.listener = listener;
    this.arrivalNanos = arrivalNanos;
    this.promptLength = request.promptTokens().length;
    this.outputLimit = request.expectedOutputTokens();
    this.outputSeed = outputSeed;
    this.tokens = Arrays.copyOf(request.promptTokens(), promptLength + outputLimit);
    this.numTokens = promptLength;
  }

  String id() {
    return request.id();
  }

  /** The hash of full block {@code b} (computed through the chain on first use). */
  long blockHash(int b, EngineHasher hasher, int blockSize) {
    while (numHashed <= b) {
      if (numHashed == blockHashes.length) {
        blockHashes = Arrays.copyOf(blockHashes, blockHashes.length * 2);
      }
      long parent = numHashed == 0 ? 0 : blockHashes[numHashed - 1];
      blockHashes[numHashed] = hasher.hash(parent, tokens, numHashed * blockSize, blockSize, request.lora(),
          request.cacheSalt());
      numHashed++;
    }
    return blockHashes[b];
  }

  void addBlock(int block) {
    if (numBlocks == blocks.length) {
      blocks = Arrays.copyOf(blocks, blocks.length * 2);
    }
    blocks[numBlocks++] = block;
  }

  void addWindowBlock(int block) {
    if (numWindowBlocks == windowBlocks.length) {
      windowBlocks = Arrays.copyOf(windowBlocks, Math.max(8, windowBlocks.length * 2));
    }
    windowBlocks[numWindowBlocks++] = block;
  }

  /** The next output token: the script's, or a pseudo-random id in the ordinary token range. */
  int nextOutputToken() {
    int[] script = request.outputTokens();
    if (script != null && numOutput < script.length) {
      return script[numOutput];
    }
    long z = outputSeed + 0x9E3779B97F4A7C15L * (numOutput + 1);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return (int) ((z ^ (z >>> 31)) & ((1 << 30) - 1));
  }

  /** Tokens still to prefill (prompt, or recompute after preemption) before the next output token. */
  int pendingPrefill() {
    return Math.max(0, numTokens - numComputed - (numOutput > 0 && numComputed > 0 ? 1 : 0));
  }
}
