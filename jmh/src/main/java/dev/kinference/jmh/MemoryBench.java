package dev.kinference.jmh;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * Memory per indexed (block, endpoint) entry, measured two ways: the object graph reachable from the index, walked
 * with JOL ({@code jolBytesPerEntry}), and the growth of the heap used after a full GC
 * ({@code heapBytesPerEntry}). The index is filled with {@code entries} entries over 64 endpoints, in sequences of
 * 64 blocks: {@code unique} puts every block on one endpoint only (the worst case: nothing is shared);
 * {@code dynamo} shares the first quarter of every sequence within four prefix groups, as Dynamo's benchmarks do.
 * The primary score is the fill time; the secondary results are the memory figures.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-Djol.magicFieldOffset=true"})
@State(Scope.Benchmark)
public class MemoryBench {

  static final int ENDPOINTS = 64;
  static final int DEPTH = 64;

  @Param({"1000000", "10000000"})
  public int entries = 1_000_000;

  @Param({"precise", "approximate"})
  public String index = "precise";

  @Param({"unique", "dynamo"})
  public String sharing = "unique";

  /** The memory figures, as secondary results. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Footprint {
    public double entryCount;
    public double distinctBlocks;
    public double jolBytesPerEntry;
    public double heapBytesPerEntry;
    public double arrayBytesPerEntry;

    @Setup(Level.Iteration)
    public void reset() {
      entryCount = 0;
      distinctBlocks = 0;
      jolBytesPerEntry = 0;
      heapBytesPerEntry = 0;
      arrayBytesPerEntry = 0;
    }
  }

  @Benchmark
  public long fill(Footprint f) {
    Fleet fleet = Workloads.fleet(ENDPOINTS);
    EndpointState[] states = Workloads.states(fleet);
    long before = usedAfterGc();
    CacheIndex cacheIndex = switch (index) {
      case "precise" -> new PreciseCacheIndex();
      case "approximate" -> ApproximateCacheIndex.builder()
          .defaultCapacityBlocks(entries / ENDPOINTS * 2).build();
      default -> throw new IllegalArgumentException("unknown index " + index);
    };
    fleet.addListener(cacheIndex);
    int prefix = sharing.equals("dynamo") ? DEPTH / 4 : 0;
    long s = 0;
    while (cacheIndex.entryCount() < entries) {
      for (int batch = 0; batch < 1024; batch++, s++) {
        int[] tokens = new int[DEPTH * Workloads.BLOCK_SIZE];
        long group = s % 4;
        for (int b = 0; b < DEPTH; b++) {
          Workloads.fillBlock(b < prefix ? -1 - group : 1 + s, b, tokens, b * Workloads.BLOCK_SIZE);
        }
        EndpointState e = states[(int) (s % ENDPOINTS)];
        if (cacheIndex instanceof PreciseCacheIndex) {
          cacheIndex.onEvent(e, Workloads.stored(Workloads.engineHashes(tokens, DEPTH), tokens));
        } else {
          cacheIndex.onRouted(e, Workloads.routerKeys(tokens));
        }
      }
    }
    long after = usedAfterGc();
    long count = cacheIndex.entryCount();
    f.entryCount = count;
    f.heapBytesPerEntry = (after - before) / (double) count;
    f.jolBytesPerEntry = GraphLayout.parseInstance(cacheIndex).totalSize() / (double) count;
    if (cacheIndex instanceof PreciseCacheIndex p) {
      f.distinctBlocks = p.distinctBlocks();
      f.arrayBytesPerEntry = p.arrayBytes() / (double) count;
    } else if (cacheIndex instanceof ApproximateCacheIndex a) {
      f.distinctBlocks = a.distinctBlocks();
    }
    return count;
  }

  private static long usedAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }
}
