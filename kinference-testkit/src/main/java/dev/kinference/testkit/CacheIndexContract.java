package dev.kinference.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link CacheIndex}: a lookup returns, per candidate, the number of leading prompt blocks it holds;
 * it forgets endpoints that leave; and lookups stay correct while other threads teach it.
 *
 * <p>The kit teaches an index the way it learns in production: a precise index ({@link CacheIndex#isPrecise()})
 * through {@code BlockStored} events carrying the tokens, an approximate one through {@link CacheIndex#onRouted}.
 * Override {@link #teach} if yours learns otherwise.
 */
public abstract class CacheIndexContract {

  /** For subclasses. */
  protected CacheIndexContract() {}

  private static final int BLOCK = 16;
  private static final String MODEL = "contract-model";

  /** A fresh, empty index under test. */
  protected abstract CacheIndex createIndex();

  private CacheIndex index;
  private Fleet fleet;
  private EndpointState a;
  private EndpointState b;
  private EndpointState c;

  @BeforeEach
  void setUpFleet() {
    index = createIndex();
    fleet = Fleet.create();
    fleet.addListener(index);
    fleet.setEndpoints(List.of(endpoint("a"), endpoint("b"), endpoint("c")));
    a = member("a");
    b = member("b");
    c = member("c");
  }

  /**
   * Makes {@code index} learn that {@code endpoint} holds the full blocks of {@code tokens[0, count)}, as its
   * production feed would.
   */
  protected void teach(CacheIndex index, EndpointState endpoint, int[] tokens, int count) {
    if (index.isPrecise()) {
      int blocks = count / BLOCK;
      long[] hashes = new long[blocks];
      for (int i = 0; i < blocks; i++) {
        // engine hashes: arbitrary but unique per (prefix, endpoint) and unrelated to router keys
        hashes[i] = BlockKeys.chain(0x5EED ^ endpoint.id().hashCode(), tokens, count, BLOCK)[i] * 31 + 7;
      }
      index.onEvent(endpoint, new KvEvent.BlockStored(hashes, null, Arrays.copyOf(tokens, blocks * BLOCK), BLOCK,
          null, KvEvent.Medium.GPU, null));
    } else {
      index.onRouted(endpoint, keys(tokens, count));
    }
  }

  @Test
  void anEmptyIndexMatchesNothing() {
    int[] tokens = tokens(1, 10 * BLOCK);
    assertThat(match(tokens, a, b, c)).containsExactly(0, 0, 0);
    assertThat(index.entryCount()).isZero();
  }

  @Test
  void aLookupCountsLeadingBlocksPerEndpoint() {
    int[] tokens = tokens(2, 10 * BLOCK + 5);
    teach(index, a, tokens, 10 * BLOCK);
    teach(index, b, tokens, 4 * BLOCK);
    assertThat(match(tokens, a, b, c)).containsExactly(10, 4, 0);
    assertThat(match(tokens, c, a)).containsExactly(0, 10);
  }

  @Test
  void matchingStopsWhereThePromptDiverges() {
    int[] cached = tokens(3, 8 * BLOCK);
    teach(index, a, cached, cached.length);
    int[] diverging = cached.clone();
    diverging[5 * BLOCK + 3] ^= 0x55;
    assertThat(match(diverging, a)).containsExactly(5);
    int[] longer = Arrays.copyOf(cached, 12 * BLOCK);
    System.arraycopy(tokens(4, 4 * BLOCK), 0, longer, 8 * BLOCK, 4 * BLOCK);
    assertThat(match(longer, a)).containsExactly(8);
  }

  @Test
  void aLookupWritesOnlyTheCandidatesItWasGiven() {
    int[] tokens = tokens(5, 4 * BLOCK);
    teach(index, a, tokens, tokens.length);
    int[] out = {-1, -1, -1};
    index.lookup(keys(tokens, tokens.length), new EndpointState[] {a, b, c}, 1, out);
    assertThat(out).containsExactly(4, -1, -1);
  }

  @Test
  void anEndpointThatLeavesIsForgotten() {
    int[] tokens = tokens(6, 6 * BLOCK);
    teach(index, a, tokens, tokens.length);
    teach(index, b, tokens, tokens.length);
    long before = index.entryCount();
    fleet.setEndpoints(List.of(endpoint("b"), endpoint("c")));
    assertThat(index.entryCount()).isLessThan(before);
    assertThat(match(tokens, b)).containsExactly(6);
    assertThat(match(tokens, a)).containsExactly(0);
  }

  @Test
  void entryCountCountsBlockEndpointPairs() {
    int[] tokens = tokens(7, 5 * BLOCK);
    teach(index, a, tokens, tokens.length);
    teach(index, b, tokens, 2 * BLOCK);
    assertThat(index.entryCount()).isEqualTo(7);
  }

  @Test
  void lookupsStayCorrectWhileOtherThreadsTeach() throws Exception {
    int[] stable = tokens(8, 32 * BLOCK);
    teach(index, a, stable, stable.length);
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    CountDownLatch started = new CountDownLatch(2);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (EndpointState writer : List.of(b, c)) {
        writers.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(writer.slot());
          started.countDown();
          int round = 0;
          while (!stop.get() && round++ < 20_000) {
            int[] t = tokens(random.nextInt(), (1 + random.nextInt(16)) * BLOCK);
            teach(index, writer, t, t.length);
            if (round % 64 == 0) {
              index.onEvent(writer, new KvEvent.AllBlocksCleared());
            }
          }
          return null;
        }));
      }
      started.await(10, TimeUnit.SECONDS);
      List<Future<?>> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        readers.add(pool.submit(() -> {
          for (int i = 0; i < 2_000; i++) {
            int[] out = match(stable, a, b, c);
            assertThat(out[0]).isEqualTo(32);
            assertThat(out[1]).isBetween(0, 32);
            assertThat(out[2]).isBetween(0, 32);
          }
          return null;
        }));
      }
      for (Future<?> f : readers) {
        f.get(60, TimeUnit.SECONDS);
      }
      stop.set(true);
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
  }

  @Test
  void nameIsStableLowerCaseAndNonBlank() {
    assertThat(index.name()).isNotBlank().matches("[a-z0-9][a-z0-9.-]*");
  }

  private int[] match(int[] tokens, EndpointState... candidates) {
    int[] out = new int[candidates.length];
    index.lookup(keys(tokens, tokens.length), candidates, candidates.length, out);
    return out;
  }

  private static PrefixKeys keys(int[] tokens, int count) {
    return PrefixKeys.of(BlockKeys.seed(MODEL, null, null), tokens, count, BLOCK);
  }

  private static int[] tokens(int seed, int count) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = random.nextInt(150_000);
    }
    return t;
  }

  private static Endpoint endpoint(String id) {
    return Endpoint.of(id, "http://127.0.0.1:8000/" + id, MODEL);
  }

  private EndpointState member(String id) {
    return java.util.Objects.requireNonNull(fleet.get(id), () -> "member " + id);
  }
}
