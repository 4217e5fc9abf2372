package dev.kinference.jmh.vllm;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.vllm.kvevents.KvEventBatch;
import dev.kinference.vllm.kvevents.KvEventDecoder;
import dev.kinference.testkit.vllm.KvEventEncoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * KV-event payloads decoded from msgpack bytes and applied to a {@link PreciseCacheIndex}, on one thread, as one
 * endpoint's subscriber does. Scores are blocks per second: every block named by an event counts once, stored or
 * removed.
 *
 * <p>The stream is a steady state: each of the {@value #BATCHES} batches stores {@value #BLOCKS_PER_EVENT}
 * new 16-token blocks continuing a chain (one {@code BlockStored} with their {@code token_ids}, from which the index
 * recomputes its router keys) and evicts the {@value #BLOCKS_PER_EVENT} blocks stored {@value #WINDOW} batches
 * earlier (one {@code BlockRemoved}); the pool holds about {@value #WINDOW} x {@value #BLOCKS_PER_EVENT} blocks.
 * Block hashes are random 64-bit values, half of them at or above 2^63.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KvEventIngestBench {

  static final int BATCHES = 1024;
  static final int BLOCKS_PER_EVENT = 8;
  static final int BLOCK_SIZE = 16;
  static final int WINDOW = 256;
  static final int BLOCKS_PER_PASS = BATCHES * BLOCKS_PER_EVENT * 2;

  @Param({"MAP", "ARRAY"})
  public String layout = "MAP";

  private byte[][] payloads;
  private KvEventDecoder decoder;
  private PreciseCacheIndex index;
  private EndpointState endpoint;

  @Setup
  public void setUp() {
    SplittableRandom random = new SplittableRandom(42);
    long[][] hashes = new long[BATCHES][];
    KvEventEncoder encoder = KvEventEncoder.of(KvEventEncoder.Layout.valueOf(layout));
    payloads = new byte[BATCHES][];
    for (int b = 0; b < BATCHES; b++) {
      hashes[b] = new long[BLOCKS_PER_EVENT];
      for (int i = 0; i < BLOCKS_PER_EVENT; i++) {
        hashes[b][i] = random.nextLong();
      }
      int[] tokens = new int[BLOCKS_PER_EVENT * BLOCK_SIZE];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = random.nextInt(151_000);
      }
      Long parent = b == 0 ? null : hashes[b - 1][BLOCKS_PER_EVENT - 1];
      List<KvEvent> events = new ArrayList<>();
      events.add(new KvEvent.BlockStored(hashes[b], parent, tokens, BLOCK_SIZE, null, KvEvent.Medium.GPU, null));
      int old = Math.floorMod(b - WINDOW, BATCHES);
      long[] evicted = b >= WINDOW ? hashes[old] : Arrays.copyOf(new long[] {random.nextLong()}, BLOCKS_PER_EVENT);
      events.add(new KvEvent.BlockRemoved(evicted, KvEvent.Medium.GPU));
      payloads[b] = encoder.encode(1.7e9 + b, events, 0);
    }
    // The first WINDOW batches of the next pass evict what the last WINDOW of this pass stored.
    for (int b = 0; b < WINDOW; b++) {
      List<KvEvent> events = new ArrayList<>();
      int[] tokens = new int[BLOCKS_PER_EVENT * BLOCK_SIZE];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = random.nextInt(151_000);
      }
      Long parent = b == 0 ? null : hashes[b - 1][BLOCKS_PER_EVENT - 1];
      events.add(new KvEvent.BlockStored(hashes[b], parent, tokens, BLOCK_SIZE, null, KvEvent.Medium.GPU, null));
      events.add(new KvEvent.BlockRemoved(hashes[BATCHES - WINDOW + b], KvEvent.Medium.GPU));
      payloads[b] = encoder.encode(1.7e9 + b, events, 0);
    }
    decoder = new KvEventDecoder();
    index = new PreciseCacheIndex();
    Fleet fleet = Fleet.create();
    fleet.addListener(index);
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", "http://127.0.0.1:8000", "Qwen/Qwen3-8B")));
    endpoint = java.util.Objects.requireNonNull(fleet.get("vllm-0"));
    // Reach the steady state before measuring.
    for (int pass = 0; pass < 2; pass++) {
      ingestAll();
    }
  }

  private long ingestAll() {
    long n = 0;
    for (byte[] payload : payloads) {
      KvEventBatch batch = decoder.decode(payload);
      for (KvEvent e : batch.events()) {
        index.onEvent(endpoint, e);
      }
      n += batch.events().size();
    }
    return n;
  }

  /** Decode and apply: blocks per second. */
  @Benchmark
  @OperationsPerInvocation(BLOCKS_PER_PASS)
  public long decodeAndApply() {
    return ingestAll();
  }

  /** Decode only: blocks per second. */
  @Benchmark
  @OperationsPerInvocation(BLOCKS_PER_PASS)
  public void decodeOnly(Blackhole bh) {
    for (byte[] payload : payloads) {
      bh.consume(decoder.decode(payload));
    }
  }

  /** Bytes of one pass over the stream, for the record. */
  public int passBytes() {
    int n = 0;
    for (byte[] p : payloads) {
      n += p.length;
    }
    return n;
  }
}
