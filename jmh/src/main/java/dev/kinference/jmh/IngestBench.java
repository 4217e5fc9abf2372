package dev.kinference.jmh;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * KV-event apply into the {@link PreciseCacheIndex}, in block operations per second, on one thread and on two
 * (this machine's cores). Decoding the events off the wire is measured by the kinference-vllm benchmarks.
 *
 * <p>Each thread owns 32 endpoints (events of one endpoint come from one thread, as the index requires) and a ring
 * of 8,192 conversations of 64 blocks, each published as four BlockStored events of 16 blocks (chained through
 * their parent hashes, as vLLM publishes a growing sequence) and later four BlockRemoved events of 16 blocks. One
 * operation applies one stored event and removes the same part of the conversation stored half a ring before: 16
 * stored plus 16 removed blocks, so the index holds a steady 262,144 entries per thread. Stored blocks are keyed
 * from their token ids with the router's hash chain, which is part of the cost.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class IngestBench {

  static final int ENDPOINTS_PER_THREAD = 32;
  static final int RING = 8192;
  static final int BLOCKS = 64;
  static final int PARTS = 4;
  static final int PART_BLOCKS = BLOCKS / PARTS;
  static final int MAX_THREADS = 8;

  /** The shared index and fleet. */
  @State(Scope.Benchmark)
  public static class Shared {
    PreciseCacheIndex index;
    EndpointState[] endpoints;

    @Setup(Level.Trial)
    public void build() {
      Fleet fleet = Workloads.fleet(ENDPOINTS_PER_THREAD * MAX_THREADS);
      endpoints = Workloads.states(fleet);
      index = new PreciseCacheIndex();
      fleet.addListener(index);
    }
  }

  /** One thread's endpoints and pre-built events. */
  @State(Scope.Thread)
  public static class Feeder {
    EndpointState[] mine;
    KvEvent.BlockStored[][] stored;
    KvEvent.BlockRemoved[][] removed;
    long step;

    @Setup(Level.Trial)
    public void build(Shared shared, ThreadParams params) {
      int t = params.getThreadIndex();
      mine = new EndpointState[ENDPOINTS_PER_THREAD];
      System.arraycopy(shared.endpoints, t * ENDPOINTS_PER_THREAD, mine, 0, ENDPOINTS_PER_THREAD);
      stored = new KvEvent.BlockStored[RING][PARTS];
      removed = new KvEvent.BlockRemoved[RING][PARTS];
      for (int c = 0; c < RING; c++) {
        int[] tokens = Workloads.tokens(((long) t << 32) | c, BLOCKS);
        long[] engine = Workloads.engineHashes(tokens, BLOCKS);
        for (int p = 0; p < PARTS; p++) {
          long[] hashes = java.util.Arrays.copyOfRange(engine, p * PART_BLOCKS, (p + 1) * PART_BLOCKS);
          int[] partTokens = java.util.Arrays.copyOfRange(tokens, p * PART_BLOCKS * Workloads.BLOCK_SIZE,
              (p + 1) * PART_BLOCKS * Workloads.BLOCK_SIZE);
          Long parent = p == 0 ? null : engine[p * PART_BLOCKS - 1];
          stored[c][p] = new KvEvent.BlockStored(hashes, parent, partTokens, Workloads.BLOCK_SIZE, null,
              KvEvent.Medium.GPU, null);
          removed[c][p] = Workloads.removed(hashes);
        }
      }
      // Fill the first half of the ring, so the index starts in its steady state.
      for (int c = 0; c < RING / 2; c++) {
        for (int p = 0; p < PARTS; p++) {
          shared.index.onEvent(mine[c % ENDPOINTS_PER_THREAD], stored[c][p]);
        }
      }
      step = (long) RING / 2 * PARTS;
    }
  }

  static void apply(Shared shared, Feeder f) {
    long s = f.step++;
    int c = (int) ((s / PARTS) % RING);
    int p = (int) (s % PARTS);
    int old = (c + RING / 2) % RING;
    shared.index.onEvent(f.mine[c % ENDPOINTS_PER_THREAD], f.stored[c][p]);
    shared.index.onEvent(f.mine[old % ENDPOINTS_PER_THREAD], f.removed[old][p]);
  }

  /** One thread: 16 blocks stored and 16 removed per invocation; the score is block operations per second. */
  @Benchmark
  @Threads(1)
  @OperationsPerInvocation(2 * PART_BLOCKS)
  public void apply1Thread(Shared shared, Feeder f) {
    apply(shared, f);
  }

  /** Two threads, each with its own endpoints; the score is their total block operations per second. */
  @Benchmark
  @Threads(2)
  @OperationsPerInvocation(2 * PART_BLOCKS)
  public void apply2Threads(Shared shared, Feeder f) {
    apply(shared, f);
  }
}
