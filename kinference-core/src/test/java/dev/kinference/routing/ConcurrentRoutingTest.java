package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many threads route while one thread per endpoint applies KV events (precise) or clears caches (approximate):
 * nothing throws, every request's account is released, and cached prefixes keep being found.
 */
class ConcurrentRoutingTest {

  private static final String MODEL = "m";
  private static final int ENDPOINTS = 4;

  @ParameterizedTest
  @ValueSource(strings = {"precise", "approximate"})
  void routeAndEventThreadsRunTogether(String kind) throws Exception {
    Supplier<CacheIndex> index = kind.equals("precise") ? PreciseCacheIndex::new : ApproximateCacheIndex::new;
    List<Endpoint> endpoints = new ArrayList<>();
    for (int i = 0; i < ENDPOINTS; i++) {
      endpoints.add(Endpoint.of("e" + i, "http://127.0.0.1:" + (8000 + i), MODEL));
    }
    Router router = Router.builder().endpoints(endpoints).cacheIndex(index.get()).build();
    for (EndpointState e : router.fleet().endpoints()) {
      e.updateMetrics(EndpointMetrics.of(0, 0, 0.1, System.nanoTime() + 3_600_000_000_000L));
    }
    String shared = "Shared context " + "lorem ipsum dolor sit amet ".repeat(200);
    InferenceRequest anchor = InferenceRequest.builder(MODEL).system(shared).user("anchor").build();
    TokenizedPrompt anchorPrompt = anchor.tokenize(router.tokenizer());

    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong routed = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(ENDPOINTS + 4);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < ENDPOINTS; w++) {
        String id = "e" + w;
        int seed = w;
        writers.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          long hash = (long) seed << 40;
          int rounds = 0;
          while (!stop.get()) {
            rounds++;
            if (rounds % 50 == 0) {
              router.onKvEvent(id, new KvEvent.AllBlocksCleared());
            }
            int blocks = 1 + random.nextInt(32);
            int[] tokens = new int[blocks * 16];
            for (int t = 0; t < tokens.length; t++) {
              tokens[t] = random.nextInt(100_000);
            }
            long[] hashes = new long[blocks];
            for (int b = 0; b < blocks; b++) {
              hashes[b] = ++hash;
            }
            router.onKvEvent(id, new KvEvent.BlockStored(hashes, null, tokens, 16, null, KvEvent.Medium.GPU, null));
            if (random.nextBoolean()) {
              router.onKvEvent(id, new KvEvent.BlockRemoved(Arrays.copyOf(hashes, blocks / 2), KvEvent.Medium.GPU));
            }
          }
          return null;
        }));
      }
      List<Future<?>> routers = new ArrayList<>();
      for (int r = 0; r < 4; r++) {
        int seed = 100 + r;
        routers.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          for (int i = 0; i < 3_000; i++) {
            InferenceRequest request = InferenceRequest.builder(MODEL).system(shared)
                .user("question " + random.nextInt(1_000_000)).sessionId(random.nextBoolean() ? "s" + i % 7 : null)
                .build();
            RoutingDecision d = router.route(request);
            assertThat(d.cachedPrefixTokens()).isBetween(0, d.promptTokens());
            d.reportFirstToken();
            if (random.nextInt(10) == 0) {
              RoutingDecision retry = d.retryOnNextAlternate();
              if (retry != null) {
                retry.reportFinished(Usage.UNKNOWN);
              }
            } else {
              d.reportFinished(new Usage(d.promptTokens(), d.cachedPrefixTokens(), 1));
            }
            routed.incrementAndGet();
          }
          return null;
        }));
      }
      for (Future<?> f : routers) {
        f.get(120, TimeUnit.SECONDS);
      }
      stop.set(true);
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
    assertThat(routed.get()).isEqualTo(12_000);
    for (EndpointState e : router.fleet().endpoints()) {
      assertThat(e.inFlight()).as("in flight on %s", e.id()).isZero();
      assertThat(e.awaitingFirstToken()).isZero();
      assertThat(e.pendingPrefillTokens()).isZero();
    }
    if (kind.equals("approximate")) {
      // after the storm, the shared context is still found where it was last routed
      RoutingDecision d = router.route(InferenceRequest.builder(MODEL).system(shared).user("anchor").build());
      assertThat(d.cachedPrefixTokens()).isGreaterThan(anchorPrompt.tokenCount() / 2);
    }
  }
}
