package dev.kinference.jmh;

import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.PrefixKeys;
import java.lang.management.ManagementFactory;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jol.info.GraphLayout;

/**
 * The {@link PreciseCacheIndex} as the fleet grows (issue 25): the same million (block, endpoint) pairs, in
 * Dynamo's shape (sequences of 64 blocks, the first quarter shared within 4 prefix groups), spread over
 * {@code endpoints} endpoints. Memory per entry must not grow with the fleet: {@code footprint} fills a fresh index
 * and reports, as secondary results, its bytes per entry walked with JOL ({@code jolBytesPerEntry}) and the growth of
 * the heap after a full GC ({@code heapBytesPerEntry}); the target is at most 64 bytes at 1,024 endpoints. The lookups
 * ask every endpoint for the matched prefix of a stored sequence ({@code lookupHit}) or of random keys
 * ({@code lookupMiss}), as a router in front of the whole fleet does; run with {@code -prof gc} to see that they
 * allocate nothing.
 */
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-Djol.magicFieldOffset=true"})
@State(Scope.Benchmark)
public class FleetScaleBench {

  static final int PAIRS = 1_000_000;
  static final int DEPTH = 64;

  @Param({"16", "256", "1024"})
  public int endpoints = 16;

  private PreciseCacheIndex index;
  private EndpointState[] workers;
  private Workloads.Sequence[] sequences;
  private PrefixKeys[] missKeys;
  private int[] matched;
  private int next;
  private int cycle;


  @Setup(Level.Trial)
  public void build() {
    Fleet fleet = Workloads.fleet(endpoints);
    workers = Workloads.states(fleet);
    index = new PreciseCacheIndex();
    fleet.addListener(index);
    sequences = Workloads.dynamoSequences(workers, PAIRS, DEPTH, 0.25, 4, 42);
    for (Workloads.Sequence s : sequences) {
      index.onEvent(s.worker(), s.stored());
    }
    missKeys = new PrefixKeys[1024];
    for (int i = 0; i < missKeys.length; i++) {
      missKeys[i] = Workloads.missKeys(0xBAD_C0DEL + i, DEPTH);
    }
    matched = new int[endpoints];
  }

  /** Fills a fresh index with the trial's sequences and measures it. */
  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Warmup(iterations = 0)
  @Measurement(iterations = 1)
  public long footprint(MemoryBench.Footprint f) {
    Fleet fleet = Workloads.fleet(endpoints);
    EndpointState[] states = Workloads.states(fleet);
    long before = usedAfterGc();
    PreciseCacheIndex fresh = new PreciseCacheIndex();
    fleet.addListener(fresh);
    for (Workloads.Sequence s : sequences) {
      fresh.onEvent(states[s.worker().slot() % states.length], s.stored());
    }
    long after = usedAfterGc();
    long count = fresh.entryCount();
    f.entryCount = count;
    f.distinctBlocks = fresh.distinctBlocks();
    f.heapBytesPerEntry = (after - before) / (double) count;
    f.jolBytesPerEntry = GraphLayout.parseInstance(fresh).totalSize() / (double) count;
    f.arrayBytesPerEntry = fresh.arrayBytes() / (double) count;
    return count;
  }

  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  public int lookupHit() {
    next = next + 1 == sequences.length ? 0 : next + 1;
    index.lookup(sequences[next].keys(), workers, workers.length, matched);
    return matched[0] + matched[workers.length - 1];
  }

  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  public int lookupMiss() {
    cycle = (cycle + 1) & (missKeys.length - 1);
    index.lookup(missKeys[cycle], workers, workers.length, matched);
    return matched[0] + matched[workers.length - 1];
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
