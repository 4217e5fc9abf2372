package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.SLICES;
import static dev.kinference.k8s.K8sObjects.at;
import static dev.kinference.k8s.K8sObjects.pod;
import static dev.kinference.k8s.K8sObjects.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.MaxScorePicker;
import dev.kinference.routing.Picker;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Routers fed by {@link KubernetesEndpointSource}: an endpoint that leaves the EndpointSlice is drained end to end,
 * and two independent routers (two gateway replicas, each with its own source, fleet and index) fed the same
 * fleet's metrics and KV events agree on their decisions.
 */
class FleetOnKubernetesTest {

  private static final String MODEL = "qwen3";
  private ApiServerFixture api;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeEach
  void startServer() throws Exception {
    api = new ApiServerFixture();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
    api.close();
  }

  private Router router(SplittableRandom random, AtomicLong clock) {
    return router(random, clock, new MaxScorePicker());
  }

  private Router router(SplittableRandom random, AtomicLong clock, Picker picker) {
    KubernetesEndpointSource source = KubernetesEndpointSource.builder().config(api.config()).namespace(NS)
        .service("vllm")
        .build();
    Router r = Router.builder().endpointSource(source).cacheIndex(new PreciseCacheIndex()).ticker(clock::get)
        .random(random).picker(picker).build();
    closeables.add(r);
    return r;
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  private static String words(SplittableRandom r, int count) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < count; i++) {
      sb.append(' ').append((char) ('a' + r.nextInt(26))).append((char) ('a' + r.nextInt(26)))
          .append((char) ('a' + r.nextInt(26))).append((char) ('a' + r.nextInt(26)));
    }
    return sb.toString();
  }

  private void createFleet(int n) {
    Map<String, Object[]> addresses = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      api.create(PODS, pod("vllm-" + i, "192.0.2." + (i + 1), true, MODEL));
      addresses.put("192.0.2." + (i + 1), at("vllm-" + i, true, false));
    }
    api.create(SLICES, slice("vllm-1", "vllm", addresses));
  }

  @Test
  void anEndpointLeavingTheSliceIsDrainedAndItsCacheEntriesDropped() throws Exception {
    createFleet(2);
    AtomicLong clock = new AtomicLong(1_000_000_000L);
    Router router = router(new SplittableRandom(1), clock);
    await("two endpoints", () -> router.fleet().endpoints().size() == 2);

    InferenceRequest request = InferenceRequest.builder(MODEL).system("You are terse." + words(new SplittableRandom(3),
        200)).user("hello").build();
    TokenizedPrompt prompt = request.tokenize(router.tokenizer());
    SimServer a = new SimServer("llm/vllm-0", 11, 10_000);
    for (KvEvent e : a.serve(prompt.tokens())) {
      router.onKvEvent(a.id, e);
    }
    long entriesWithA = router.cacheIndex().entryCount();
    assertThat(entriesWithA).isPositive();
    RoutingDecision inFlight = router.route(request);
    assertThat(inFlight.endpoint().id()).isEqualTo("llm/vllm-0");
    EndpointState leaving = Objects.requireNonNull(router.fleet().get("llm/vllm-0"));

    // The pod starts terminating: its slice entry says so.
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-0", false, true),
        "192.0.2.2", at("vllm-1", true, false))));
    await("vllm-0 gone", () -> router.fleet().endpoints().size() == 1);

    assertThat(leaving.health()).isEqualTo(Health.DRAINING);
    assertThat(router.fleet().draining()).containsExactly(leaving);
    assertThat(router.cacheIndex().entryCount()).isZero(); // its blocks were the only ones
    for (int i = 0; i < 20; i++) {
      RoutingDecision d = router.route(request);
      assertThat(d.endpoint().id()).isEqualTo("llm/vllm-1");
      d.reportFirstToken();
      d.reportFinished(new Usage(prompt.tokenCount(), 0, 5));
    }
    // The request in flight on the leaving endpoint finishes; then the endpoint is gone for good.
    assertThat(leaving.inFlight()).isEqualTo(1);
    inFlight.reportFirstToken();
    inFlight.reportFinished(new Usage(prompt.tokenCount(), prompt.tokenCount(), 5));
    assertThat(router.fleet().draining()).isEmpty();
  }

  @Test
  void twoReplicasFedTheSameMetricsAndKvEventsMakeTheSameDecisions() throws Exception {
    createFleet(4);
    // Replicas configured alike (as a Deployment's are): exact ties only, broken by the same seeded sequence.
    double deterministic = agreement(new SplittableRandom(7), new SplittableRandom(7), new MaxScorePicker(0.0));
    // For comparison, not asserted: the default 1% tie band broken by each replica's own randomness.
    double independent = agreement(new SplittableRandom(1), new SplittableRandom(2), new MaxScorePicker());
    System.out.printf("replica agreement: %.2f%% with replica-consistent tie-breaking, %.2f%% with independent "
        + "random tie-breaking%n", 100 * deterministic, 100 * independent);
    assertThat(deterministic).as("share of identical decisions").isGreaterThanOrEqualTo(0.99);
  }

  private double agreement(SplittableRandom randomA, SplittableRandom randomB, Picker picker) throws Exception {
    int servers = 4;
    AtomicLong clock = new AtomicLong(1_000_000_000L);
    // Independent replicas: each its own source, fleet and index.
    Router replicaA = router(randomA, clock, picker);
    Router replicaB = router(randomB, clock, picker);
    await("both replicas see the fleet", () -> replicaA.fleet().endpoints().size() == servers
        && replicaB.fleet().endpoints().size() == servers);

    // The simulated fleet: each server hashes blocks with its own seed (no shared PYTHONHASHSEED).
    Map<String, SimServer> fleet = new LinkedHashMap<>();
    for (int i = 0; i < servers; i++) {
      fleet.put("llm/vllm-" + i, new SimServer("llm/vllm-" + i, 1000 + i * 7919L, 600));
    }
    SplittableRandom workload = new SplittableRandom(42);
    List<String> systemPrompts = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      systemPrompts.add("Assistant " + i + ":" + words(workload, 150 + workload.nextInt(200)));
    }
    record InFlight(RoutingDecision a, RoutingDecision b, String server, long doneAt, int prompt) {}
    List<InFlight> running = new ArrayList<>();
    int requests = 600;
    int agreed = 0;
    for (int i = 0; i < requests; i++) {
      clock.addAndGet(20_000_000L); // a request every 20 ms
      long now = clock.get();
      // Finished requests are reported to both replicas alike.
      for (Iterator<InFlight> it = running.iterator(); it.hasNext(); ) {
        InFlight f = it.next();
        if (f.doneAt() <= now) {
          for (RoutingDecision d : List.of(f.a(), f.b())) {
            d.reportFirstToken();
            d.reportFinished(new Usage(f.prompt(), 0, 64));
          }
          fleet.get(f.server()).inFlight--;
          it.remove();
        }
      }
      // Both replicas read the same scrape every 100 ms.
      if (i % 5 == 0) {
        for (SimServer s : fleet.values()) {
          EndpointMetrics m = EndpointMetrics.of(Math.max(0, s.inFlight - 4), Math.min(4, s.inFlight),
              s.kvUsage(), now).withCacheConfig(16, s.capacity);
          Objects.requireNonNull(replicaA.fleet().get(s.id)).updateMetrics(m);
          Objects.requireNonNull(replicaB.fleet().get(s.id)).updateMetrics(m);
        }
      }
      String system = systemPrompts.get((int) Math.min(systemPrompts.size() - 1,
          Math.abs(workload.nextGaussian()) * 6));
      InferenceRequest request = InferenceRequest.builder(MODEL).system(system)
          .user("Question " + i + ":" + words(workload, 10 + workload.nextInt(40))).build();
      RoutingDecision a = replicaA.route(request);
      RoutingDecision b = replicaB.route(request);
      if (a.endpoint().id().equals(b.endpoint().id())) {
        agreed++;
      }
      // Replica A's choice is the one served; the server's KV events reach both replicas.
      SimServer chosen = fleet.get(a.endpoint().id());
      int[] tokens = request.tokenize(replicaA.tokenizer()).tokens();
      for (KvEvent e : chosen.serve(tokens)) {
        replicaA.onKvEvent(chosen.id, e);
        replicaB.onKvEvent(chosen.id, e);
      }
      chosen.inFlight++;
      running.add(new InFlight(a, b, chosen.id, now + 150_000_000L + workload.nextLong(300_000_000L),
          tokens.length));
    }
    // The cache mattered: the replicas' indexes hold the same blocks.
    assertThat(replicaA.cacheIndex().entryCount()).isPositive().isEqualTo(replicaB.cacheIndex().entryCount());
    return agreed / (double) requests;
  }

  /**
   * One simulated vLLM server's prefix cache: blocks of 16 tokens hashed in a chain with the server's own seed (as
   * vLLM does without PYTHONHASHSEED), LRU eviction, and the KV events vLLM would publish.
   */
  static final class SimServer {
    final String id;
    final long seed;
    final int capacity;
    int inFlight;
    private final LinkedHashMap<Long, Boolean> blocks = new LinkedHashMap<>(16, 0.75f, true);

    SimServer(String id, long seed, int capacity) {
      this.id = id;
      this.seed = seed;
      this.capacity = capacity;
    }

    double kvUsage() {
      return blocks.size() / (double) capacity;
    }

    List<KvEvent> serve(int[] tokens) {
      List<KvEvent> events = new ArrayList<>();
      int n = tokens.length / 16;
      long parent = 0;
      boolean hasParent = false;
      List<Long> run = new ArrayList<>(); // consecutive newly stored blocks: one BlockStored event
      Long runParent = null;
      int runStart = -1;
      for (int b = 0; b <= n; b++) {
        boolean stored = false;
        long h = 0;
        if (b < n) {
          h = seed * 0x9E3779B97F4A7C15L + (hasParent ? parent : 0x5bd1e995L);
          for (int t = 0; t < 16; t++) {
            h = (h ^ tokens[b * 16 + t]) * 0x100000001B3L;
          }
          stored = blocks.get(h) == null;
        }
        if (stored) {
          if (run.isEmpty()) {
            runStart = b;
            runParent = hasParent ? parent : null;
          }
          run.add(h);
          blocks.put(h, Boolean.TRUE);
        } else if (!run.isEmpty()) {
          long[] hashes = run.stream().mapToLong(Long::longValue).toArray();
          int[] ids = Arrays.copyOfRange(tokens, runStart * 16, (runStart + hashes.length) * 16);
          events.add(new KvEvent.BlockStored(hashes, runParent, ids, 16, null, KvEvent.Medium.GPU, null));
          run.clear();
        }
        parent = h;
        hasParent = true;
      }
      List<Long> evicted = new ArrayList<>();
      for (Iterator<Long> it = blocks.keySet().iterator(); blocks.size() > capacity && it.hasNext(); ) {
        evicted.add(it.next());
        it.remove();
      }
      if (!evicted.isEmpty()) {
        events.add(new KvEvent.BlockRemoved(evicted.stream().mapToLong(Long::longValue).toArray(),
            KvEvent.Medium.GPU));
      }
      return events;
    }
  }
}
