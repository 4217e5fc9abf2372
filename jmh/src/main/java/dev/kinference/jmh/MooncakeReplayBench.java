package dev.kinference.jmh;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
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

/**
 * A Mooncake trace replayed through the {@link PreciseCacheIndex} at a chosen offered rate, as NVIDIA Dynamo's
 * {@code mooncake_bench} does: each request is a lookup of its prompt's blocks across all workers; each worker's
 * KV cache (an LRU of {@code gpuBlocks} blocks, requests assigned to workers at random) is simulated beforehand to
 * produce the BlockStored and BlockRemoved events it would publish, replayed right after the request's lookup.
 *
 * <p>The trace is generated in the published format ({@link MooncakeTraceFile}) unless {@code traceFile} names one (the
 * real trace works). Each hash id is 512 tokens: 32 blocks of 16 (vLLM's block size), or one block as Dynamo's
 * benchmark maps it ({@code blocksPerHashId}). The replay is scaled so that it offers
 * {@code offeredBlockOpsPerSec} block operations per second, counted as Dynamo counts them (blocks looked up plus
 * blocks stored; removes count as operations but not blocks). {@code threads} replay threads each own a share of
 * the workers: their events and their requests' lookups. A thread behind schedule does not wait.
 *
 * <p>The primary score is the replay's wall time; the secondary results are what matters: offered and achieved
 * block operations and operations (requests plus events) per second, the lookup latency percentiles, and block
 * operations per second of the replay threads' CPU time (the rate on an unshared machine). Secondary results are
 * summed over measurement iterations, so keep one ({@code -i 1}, the default).
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 1) // the secondary results are sums over iterations: keep one
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
@State(Scope.Benchmark)
public class MooncakeReplayBench {

  @Param({"2000000", "8000000", "32000000"})
  public int offeredBlockOpsPerSec = 8_000_000;

  @Param({"1", "2"})
  public int threads = 1;

  @Param({"16"})
  public int workers = 16;

  /** KV cache capacity of each worker, in 16-token blocks (32,768: 524,288 tokens). */
  @Param({"32768"})
  public int gpuBlocks = 32_768;

  /**
   * Router blocks per 512-token hash id: 32 is vLLM's 16-token blocks; 1 is Dynamo's {@code mooncake_bench}, which
   * makes each hash id one block.
   */
  @Param({"32", "1"})
  public int blocksPerHashId = 32;

  /** Requests generated when no trace file is given. */
  @Param({"8000"})
  public int requests = 8000;

  /** A Mooncake JSONL trace to replay instead of a generated one. */
  @Param({""})
  public String traceFile = "";

  private Fleet fleet;
  private EndpointState[] workerStates;
  private PreciseCacheIndex index;
  private Replay[] replays;
  private long totalBlockOps;
  private long totalOps;
  private long lookups;
  private long traceSpanNanos;

  /** One thread's share of the timeline. */
  private static final class Replay {
    final List<Long> at = new ArrayList<>();
    final List<Object> payload = new ArrayList<>();
    final List<@Nullable EndpointState> endpoint = new ArrayList<>();
    long[] atNanos = new long[0];
    Object[] items = new Object[0];
    @Nullable EndpointState[] targets = new EndpointState[0];
    long[] latencies = new long[0];
    int lookupCount;
    long finishedAt;
    long cpuNanos;

    void add(long timeNanos, Object item, @Nullable EndpointState target) {
      at.add(timeNanos);
      payload.add(item);
      endpoint.add(target);
      if (target == null) {
        lookupCount++;
      }
    }

    void freeze() {
      atNanos = at.stream().mapToLong(Long::longValue).toArray();
      items = payload.toArray();
      targets = endpoint.toArray(new EndpointState[0]);
      latencies = new long[lookupCount];
      at.clear();
      payload.clear();
      endpoint.clear();
    }
  }

  /** What one replay achieved; read by JMH as secondary results. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Outcome {
    public double offeredBlockOpsPerSec;
    public double achievedBlockOpsPerSec;
    public double offeredOpsPerSec;
    public double achievedOpsPerSec;
    public double lookupP50Us;
    public double lookupP99Us;
    public double lookupP999Us;
    /** Block operations per second of CPU time the replay threads used: the rate without other load. */
    public double blockOpsPerCpuSecond;
    /** CPU time of the replay threads per wall second. */
    public double replayCores;

    @Setup(Level.Iteration)
    public void reset() {
      offeredBlockOpsPerSec = 0;
      achievedBlockOpsPerSec = 0;
      offeredOpsPerSec = 0;
      achievedOpsPerSec = 0;
      lookupP50Us = 0;
      lookupP99Us = 0;
      lookupP999Us = 0;
      blockOpsPerCpuSecond = 0;
      replayCores = 0;
    }
  }

  @Setup(Level.Trial)
  public void prepare() throws IOException {
    Path file;
    if (traceFile.isEmpty()) {
      file = Files.createTempFile("mooncake-", ".jsonl");
      MooncakeTraceFile.generate(file, requests, 20, 42);
    } else {
      file = Path.of(traceFile);
    }
    List<MooncakeTraceFile.Request> trace = MooncakeTraceFile.read(file);
    if (traceFile.isEmpty()) {
      Files.deleteIfExists(file);
    }
    fleet = Workloads.fleet(workers);
    workerStates = Workloads.states(fleet);
    replays = new Replay[threads];
    for (int t = 0; t < threads; t++) {
      replays[t] = new Replay();
    }
    simulate(trace);
    for (Replay r : replays) {
      r.freeze();
    }
    System.out.printf("%nMooncake replay: %d requests over %.1f s of trace; %d block operations, %d operations%n",
        trace.size(), traceSpanNanos / 1e9, totalBlockOps, totalOps);
  }

  /** Assigns requests to workers and simulates each worker's LRU block pool to derive its events. */
  private void simulate(List<MooncakeTraceFile.Request> trace) {
    SplittableRandom assign = new SplittableRandom(42);
    // The same KV capacity in tokens whatever a block stands for.
    int poolBlocks = Math.max(1, (int) ((long) gpuBlocks * blocksPerHashId / 32));
    List<LinkedHashMap<Long, Boolean>> pools = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      pools.add(new LinkedHashMap<>(poolBlocks * 2, 0.75f, true));
    }
    long seed = BlockKeys.seed(Workloads.MODEL, null, null);
    long t0 = trace.isEmpty() ? 0 : trace.get(0).timestampMs();
    int[] block = new int[Workloads.BLOCK_SIZE];
    for (MooncakeTraceFile.Request req : trace) {
      int perId = blocksPerHashId;
      int blocks = perId == 1 ? req.hashIds().length
          : Math.min(req.inputLength() / Workloads.BLOCK_SIZE, req.hashIds().length * perId);
      if (blocks == 0) {
        continue;
      }
      long[] keys = new long[blocks];
      long[] engine = new long[blocks];
      long key = seed;
      long eng = Workloads.ENGINE_SEED;
      for (int b = 0; b < blocks; b++) {
        Workloads.fillBlock(req.hashIds()[b / perId], b % perId, block, 0);
        key = BlockKeys.next(key, block, 0, Workloads.BLOCK_SIZE);
        eng = BlockKeys.next(eng, block, 0, Workloads.BLOCK_SIZE);
        keys[b] = key;
        engine[b] = eng;
      }
      int w = assign.nextInt(workers);
      Replay replay = replays[w % threads];
      long at = (req.timestampMs() - t0) * 1_000_000L;
      traceSpanNanos = Math.max(traceSpanNanos, at);
      replay.add(at, PrefixKeys.ofKeys(keys, Workloads.BLOCK_SIZE, blocks * Workloads.BLOCK_SIZE), null);
      totalBlockOps += blocks;
      totalOps++;
      lookups++;

      LinkedHashMap<Long, Boolean> pool = pools.get(w);
      int cached = 0;
      while (cached < blocks && pool.containsKey(engine[cached])) {
        cached++;
      }
      for (int b = cached - 1; b >= 0; b--) {
        pool.get(engine[b]);
      }
      int fresh = Math.min(blocks - cached, poolBlocks - cached);
      if (fresh <= 0) {
        continue;
      }
      int evict = pool.size() + fresh - poolBlocks;
      if (evict > 0) {
        long[] gone = new long[evict];
        Iterator<Long> it = pool.keySet().iterator();
        for (int i = 0; i < evict; i++) {
          gone[i] = it.next();
          it.remove();
        }
        replay.add(at, Workloads.removed(gone), workerStates[w]);
        totalOps++;
      }
      int[] tokens = new int[fresh * Workloads.BLOCK_SIZE];
      for (int i = 0; i < fresh; i++) {
        int b = cached + i;
        Workloads.fillBlock(req.hashIds()[b / perId], b % perId, tokens, i * Workloads.BLOCK_SIZE);
      }
      long[] hashes = Arrays.copyOfRange(engine, cached, cached + fresh);
      for (int b = cached + fresh - 1; b >= cached; b--) {
        pool.put(engine[b], Boolean.TRUE);
      }
      Long parent = cached == 0 ? null : engine[cached - 1];
      replay.add(at, new KvEvent.BlockStored(hashes, parent, tokens, Workloads.BLOCK_SIZE, null, KvEvent.Medium.GPU,
          null), workerStates[w]);
      totalBlockOps += fresh;
      totalOps++;
    }
  }

  @Setup(Level.Iteration)
  public void freshIndex() {
    index = new PreciseCacheIndex();
    fleet.addListener(index);
  }

  @Benchmark
  public long replay(Outcome outcome) throws InterruptedException {
    double durationNanos = totalBlockOps * 1e9 / offeredBlockOpsPerSec;
    double scale = traceSpanNanos == 0 ? 0 : durationNanos / traceSpanNanos;
    long start = System.nanoTime() + 1_000_000;
    Thread[] running = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      Replay r = replays[t];
      running[t] = new Thread(() -> run(r, start, scale), "replay-" + t);
      running[t].start();
    }
    long end = start;
    long cpu = 0;
    for (int t = 0; t < threads; t++) {
      running[t].join();
      end = Math.max(end, replays[t].finishedAt);
      cpu += replays[t].cpuNanos;
    }
    double seconds = Math.max(end - start, 1) / 1e9;
    double offeredSeconds = Math.max(durationNanos, 1) / 1e9;
    outcome.offeredBlockOpsPerSec = totalBlockOps / offeredSeconds;
    outcome.achievedBlockOpsPerSec = totalBlockOps / seconds;
    outcome.offeredOpsPerSec = totalOps / offeredSeconds;
    outcome.achievedOpsPerSec = totalOps / seconds;
    outcome.blockOpsPerCpuSecond = totalBlockOps / (Math.max(cpu, 1) / 1e9);
    outcome.replayCores = cpu / 1e9 / seconds;
    long[] all = new long[(int) lookups];
    int n = 0;
    for (Replay r : replays) {
      System.arraycopy(r.latencies, 0, all, n, r.latencies.length);
      n += r.latencies.length;
    }
    Arrays.sort(all, 0, n);
    outcome.lookupP50Us = n == 0 ? 0 : all[n / 2] / 1e3;
    outcome.lookupP99Us = n == 0 ? 0 : all[(int) (n * 0.99)] / 1e3;
    outcome.lookupP999Us = n == 0 ? 0 : all[(int) (n * 0.999)] / 1e3;
    return index.entryCount();
  }

  private void run(Replay r, long start, double scale) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long cpuStart = mx.getCurrentThreadCpuTime();
    int[] matched = new int[workers];
    int lookup = 0;
    for (int i = 0; i < r.items.length; i++) {
      long due = start + (long) (r.atNanos[i] * scale);
      long now = System.nanoTime();
      if (due - now > 50_000) {
        LockSupport.parkNanos(due - now - 20_000);
      }
      while (System.nanoTime() < due) {
        Thread.onSpinWait();
      }
      EndpointState target = r.targets[i];
      Object item = r.items[i];
      if (target == null) {
        long t0 = System.nanoTime();
        index.lookup((PrefixKeys) item, workerStates, workers, matched);
        r.latencies[lookup++] = System.nanoTime() - t0;
      } else {
        index.onEvent(target, (KvEvent) item);
      }
    }
    r.finishedAt = System.nanoTime();
    r.cpuNanos = mx.getCurrentThreadCpuTime() - cpuStart;
  }
}
