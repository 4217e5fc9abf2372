package dev.kinference.jmh;

import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The {@link PreciseCacheIndex} in the shapes of NVIDIA Dynamo's {@code radix_tree_microbench} ({@code dynamo-10k}:
 * 10,000 (worker, block) pairs, depth 32, 4 workers, block size 16, 25% shared prefix in 4 groups) and
 * {@code kv_indexer_bench} ({@code indexer-100k}: 100,000 pairs, depth 64, 4 workers), and a large one
 * ({@code large-1m}: 1,400,000 pairs, depth 64, 64 workers, about 1.05M entries after prefix sharing).
 *
 * <p>As in Dynamo: {@code store} times one BlockStored event of a whole sequence after removing it untimed,
 * {@code remove} times one BlockRemoved event after re-storing it untimed, and lookups ask every worker for the
 * matched prefix of a stored sequence (hit), of random keys (miss), or of a sequence whose second half is random
 * (partial). Times are per event or lookup; divide store and remove by the depth for per-block figures.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@State(Scope.Benchmark)
public class PreciseIndexBench {

  private static final long SEED = BlockKeys.seed(Workloads.MODEL, null, null);

  @Param({"dynamo-10k", "indexer-100k", "large-1m"})
  public String shape = "dynamo-10k";

  private PreciseCacheIndex index;
  private EndpointState[] workers;
  private Workloads.Sequence[] sequences;
  private PrefixKeys[] missKeys;
  private PrefixKeys[] partialKeys;
  private int[] matched;
  private int next;
  private int cycle;

  @Setup(Level.Trial)
  public void build() {
    int pairs;
    int depth;
    int workerCount;
    switch (shape) {
      case "dynamo-10k" -> {
        pairs = 10_000;
        depth = 32;
        workerCount = 4;
      }
      case "indexer-100k" -> {
        pairs = 100_000;
        depth = 64;
        workerCount = 4;
      }
      case "large-1m" -> {
        pairs = 1_400_000;
        depth = 64;
        workerCount = 64;
      }
      default -> throw new IllegalArgumentException("unknown shape " + shape);
    }
    Fleet fleet = Workloads.fleet(workerCount);
    workers = Workloads.states(fleet);
    index = new PreciseCacheIndex();
    fleet.addListener(index);
    sequences = Workloads.dynamoSequences(workers, pairs, depth, 0.25, 4, 42);
    for (Workloads.Sequence s : sequences) {
      index.onEvent(s.worker(), s.stored());
    }
    missKeys = new PrefixKeys[1024];
    for (int i = 0; i < missKeys.length; i++) {
      missKeys[i] = Workloads.missKeys(0xBAD_C0DEL + i, depth);
    }
    partialKeys = new PrefixKeys[sequences.length];
    for (int i = 0; i < sequences.length; i++) {
      partialKeys[i] = Workloads.partialKeys(sequences[i].keys(), depth / 2, 0xDEADL + i);
    }
    matched = new int[workerCount];
    System.out.printf("%n%s: %d sequences of %d blocks on %d workers; %d entries, %d distinct blocks%n", shape,
        sequences.length, depth, workerCount, index.entryCount(), index.distinctBlocks());
  }

  /** Each invocation works on the next sequence, cycling. */
  @Setup(Level.Invocation)
  public void nextSequence() {
    next = next + 1 == sequences.length ? 0 : next + 1;
  }

  @Benchmark
  public int lookupHit() {
    index.lookup(sequences[next].keys(), workers, workers.length, matched);
    return matched[0] + matched[workers.length - 1];
  }

  @Benchmark
  public int lookupMiss() {
    cycle = (cycle + 1) & (missKeys.length - 1);
    index.lookup(missKeys[cycle], workers, workers.length, matched);
    return matched[0] + matched[workers.length - 1];
  }

  @Benchmark
  public int lookupPartial() {
    index.lookup(partialKeys[next], workers, workers.length, matched);
    return matched[0] + matched[workers.length - 1];
  }

  /** Dynamo's {@code COMPUTE_BLOCK_HASH}: the router keys of a sequence's tokens ({@code depth} blocks of 16). */
  @Benchmark
  public long hashSequence() {
    int[] tokens = sequences[next].tokens();
    long[] keys = BlockKeys.chain(SEED, tokens, tokens.length, Workloads.BLOCK_SIZE);
    return keys[keys.length - 1];
  }

  /** One BlockStored event of a whole sequence ({@code depth} blocks). */
  @Benchmark
  public void store(StoreCycle cycleState) {
    Workloads.Sequence s = sequences[next];
    index.onEvent(s.worker(), s.stored());
  }

  /** One BlockRemoved event of a whole sequence ({@code depth} blocks). */
  @Benchmark
  public void remove(RemoveCycle cycleState) {
    Workloads.Sequence s = sequences[next];
    index.onEvent(s.worker(), s.removed());
  }

  /** Removes the next sequence before the timed store. */
  @State(Scope.Thread)
  public static class StoreCycle {
    @Setup(Level.Invocation)
    public void removeFirst(PreciseIndexBench b) {
      Workloads.Sequence s = b.sequences[b.next];
      b.index.onEvent(s.worker(), s.removed());
    }
  }

  /** Re-stores the sequence after the timed remove, so the index keeps its size. */
  @State(Scope.Thread)
  public static class RemoveCycle {
    @TearDown(Level.Invocation)
    public void storeAgain(PreciseIndexBench b) {
      Workloads.Sequence s = b.sequences[b.next];
      b.index.onEvent(s.worker(), s.stored());
    }
  }
}
