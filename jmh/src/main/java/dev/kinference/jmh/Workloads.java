package dev.kinference.jmh;

import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Deterministic fleets, token streams and KV events shared by the benchmarks. Not thread-safe unless stated. */
final class Workloads {

  static final String MODEL = "qwen3-8b";
  static final int BLOCK_SIZE = BlockKeys.DEFAULT_BLOCK_SIZE;
  /** Token ids are drawn below Qwen3's vocabulary size. */
  static final int VOCABULARY = 151_643;
  /** The engine's hash chain is seeded differently from the router's, as vLLM's is: the index maps one to other. */
  static final long ENGINE_SEED = 0x5EED_0F_E6_1E_0001L;

  private Workloads() {}

  /** {@code n} endpoints serving {@link #MODEL}, ids {@code ep-0 .. ep-(n-1)}. */
  static List<Endpoint> endpoints(int n) {
    List<Endpoint> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Endpoint.of("ep-" + i, "http://10.0." + (i / 250) + "." + (i % 250 + 1) + ":8000", MODEL));
    }
    return out;
  }

  /** A fleet of {@code n} endpoints; its states have slots 0 to n-1 in id order. */
  static Fleet fleet(int n) {
    return Fleet.of(endpoints(n));
  }

  /** The fleet's states in slot order, as an array. */
  static EndpointState[] states(Fleet fleet) {
    return fleet.endpoints().toArray(new EndpointState[0]);
  }

  /** Gives every endpoint a fresh, idle metrics snapshot with the cache configuration. */
  static void scrape(EndpointState[] states, long numGpuBlocks, long nowNanos) {
    for (EndpointState s : states) {
      s.updateMetrics(EndpointMetrics.of(0, 2, 0.3, nowNanos).withCacheConfig(BLOCK_SIZE, numGpuBlocks));
    }
  }

  /** {@code blocks * BLOCK_SIZE} token ids of the blocks {@code [0, blocks)} of stream {@code stream}. */
  static int[] tokens(long stream, int blocks) {
    int[] out = new int[blocks * BLOCK_SIZE];
    for (int b = 0; b < blocks; b++) {
      fillBlock(stream, b, out, b * BLOCK_SIZE);
    }
    return out;
  }

  /** Writes the tokens of block {@code block} of stream {@code stream} at {@code out[at]}. */
  static void fillBlock(long stream, int block, int[] out, int at) {
    SplittableRandom r = new SplittableRandom(stream * 0x9E3779B97F4A7C15L + block);
    for (int t = 0; t < BLOCK_SIZE; t++) {
      out[at + t] = r.nextInt(VOCABULARY);
    }
  }

  /** The engine's block hashes for {@code tokens}: a different chain than the router's, like vLLM's own. */
  static long[] engineHashes(int[] tokens, int blocks) {
    return BlockKeys.chain(ENGINE_SEED, tokens, blocks * BLOCK_SIZE, BLOCK_SIZE);
  }

  /** The router's keys for {@code tokens}. */
  static PrefixKeys routerKeys(int[] tokens) {
    return PrefixKeys.of(BlockKeys.seed(MODEL, null, null), tokens, tokens.length, BLOCK_SIZE);
  }

  static KvEvent.BlockStored stored(long[] engineHashes, int[] tokens) {
    return new KvEvent.BlockStored(engineHashes, null, tokens, BLOCK_SIZE, null, KvEvent.Medium.GPU, null);
  }

  static KvEvent.BlockRemoved removed(long[] engineHashes) {
    return new KvEvent.BlockRemoved(engineHashes, KvEvent.Medium.GPU);
  }

  /** Keys that no index holds: random, never 0. */
  static PrefixKeys missKeys(long seed, int blocks) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] keys = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      keys[i] = r.nextLong() | 1;
    }
    return PrefixKeys.ofKeys(keys, BLOCK_SIZE, blocks * BLOCK_SIZE);
  }

  /** The first {@code matching} keys of {@code hit}, then keys no index holds. */
  static PrefixKeys partialKeys(PrefixKeys hit, int matching, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] keys = hit.toArray();
    for (int i = matching; i < keys.length; i++) {
      keys[i] = r.nextLong() | 1;
    }
    return PrefixKeys.ofKeys(keys, BLOCK_SIZE, keys.length * BLOCK_SIZE);
  }

  /**
   * One sequence of NVIDIA Dynamo's radix-tree microbenchmark shape: {@code depth} blocks on one worker, its first
   * {@code round(depth * prefixRatio)} blocks shared by every sequence of its prefix group.
   */
  @SuppressWarnings("ArrayRecordComponent") // benchmark fixture: read, never copied or compared
  record Sequence(EndpointState worker, int[] tokens, long[] engineHashes, PrefixKeys keys,
      KvEvent.BlockStored stored, KvEvent.BlockRemoved removed) {}

  /**
   * Dynamo's {@code generate_sequences}: {@code pairs / depth} sequences, sequence i on worker {@code i % workers},
   * each in a random one of {@code groups} prefix groups (seeded), sharing the group's first
   * {@code round(depth * prefixRatio)} blocks; the rest is unique to the sequence.
   */
  static Sequence[] dynamoSequences(EndpointState[] workers, int pairs, int depth, double prefixRatio, int groups,
      long seed) {
    int count = pairs / depth;
    int prefix = (int) Math.round(depth * prefixRatio);
    SplittableRandom rng = new SplittableRandom(seed);
    Sequence[] out = new Sequence[count];
    for (int s = 0; s < count; s++) {
      int group = groups > 0 && prefix > 0 ? rng.nextInt(groups) : -1;
      int[] tokens = new int[depth * BLOCK_SIZE];
      for (int b = 0; b < depth; b++) {
        long stream = group >= 0 && b < prefix ? -1L - group : 1L + s;
        fillBlock(stream, b, tokens, b * BLOCK_SIZE);
      }
      long[] engine = engineHashes(tokens, depth);
      out[s] = new Sequence(workers[s % workers.length], tokens, engine, routerKeys(tokens), stored(engine, tokens),
          removed(engine));
    }
    return out;
  }
}
