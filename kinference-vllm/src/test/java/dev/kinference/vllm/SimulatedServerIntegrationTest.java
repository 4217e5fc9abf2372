package dev.kinference.vllm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.server.KvEventFormat;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.vllm.kvevents.KvEventSubscriber;
import dev.kinference.vllm.kvevents.KvEventSubscriptions;
import dev.kinference.vllm.metrics.MetricsScraper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The module against the simulator's real-time vLLM servers (real HTTP, real ZeroMQ, vLLM's byte formats): after a
 * workload the precise index predicts exactly the cached prompt tokens the server reports for every probe prompt
 * ({@code usage.prompt_tokens_details.cached_tokens}), including after dropped events (replayed) and after the
 * server was killed and restarted (detected, rebuilt).
 */
class SimulatedServerIntegrationTest {

  static final String MODEL = "sim-model";
  static final ObjectMapper JSON = new ObjectMapper();

  final Random random = new Random(3);
  final List<String> prefixes = new ArrayList<>();
  final List<String> sent = new ArrayList<>();
  final ApproximateTokenizer tokenizer = new ApproximateTokenizer();
  final HttpClient http = HttpClient.newHttpClient();
  SimulatedServer server;
  KvEventSubscriptions subscriptions;
  MetricsScraper scraper;

  @AfterEach
  void close() {
    if (scraper != null) {
      scraper.close();
    }
    if (subscriptions != null) {
      subscriptions.close();
    }
    if (server != null) {
      server.close();
    }
    http.close();
  }

  String words(int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(' ').append("w").append(random.nextInt(5000));
    }
    return sb.toString();
  }

  String prompt() {
    if (prefixes.isEmpty()) {
      for (int i = 0; i < 4; i++) {
        prefixes.add("System prompt " + i + ":" + words(60 + 30 * i));
      }
    }
    return prefixes.get(random.nextInt(prefixes.size())) + " Question:" + words(random.nextInt(40));
  }

  /** Sends a completion; returns the cached prompt tokens the server reports. */
  int complete(String prompt) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", prompt).put("max_tokens", 2);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.baseUri() + "/v1/completions"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode details = JSON.readTree(r.body()).path("usage").path("prompt_tokens_details");
    return details.path("cached_tokens").asInt(0);
  }

  void workload(int requests) throws Exception {
    for (int i = 0; i < requests; i++) {
      String p = prompt();
      sent.add(p);
      complete(p);
    }
  }

  void await(String what, BooleanSupplier condition) {
    await(what, Duration.ofSeconds(60), condition);
  }

  void await(String what, Duration within, BooleanSupplier condition) {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        StringBuilder threads = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, stack) -> {
          // ours, and JeroMQ's I/O threads: which side of a silent connection is stuck
          if (t.getName().startsWith("kv-events") || t.getName().startsWith("iothread")) {
            threads.append('\n').append(t.getName()).append(' ').append(t.getState());
            for (StackTraceElement e : stack) {
              threads.append("\n    at ").append(e);
            }
          }
        });
        throw new AssertionError("timed out waiting for " + what + "; server published "
            + server.nextKvEventSequence() + " batches (" + server.kvEventBatchesSent() + " sent live) to "
            + server.kvEventSubscriptions() + " subscriptions so far; subscriber " + subscriber().stats() + threads);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  KvEventSubscriber subscriber() {
    return subscriptions.subscriber(server.name());
  }

  /**
   * Waits until the server has been quiet for a while (the last step's events may be published just after a
   * response) and the subscriber has applied every batch it published.
   */
  void awaitCaughtUp() {
    await("subscriber caught up", caughtUp(server, this::subscriber));
  }

  /**
   * True once {@code server} has published nothing new for 100 ms and {@code subscriber} has applied every batch it
   * published; shared with {@link HybridSimulatedServerTest}.
   */
  static BooleanSupplier caughtUp(SimulatedServer server, java.util.function.Supplier<KvEventSubscriber> subscriber) {
    long[] seen = {-1, System.nanoTime()};
    return () -> {
      long published = server.nextKvEventSequence();
      if (published != seen[0]) {
        seen[0] = published;
        seen[1] = System.nanoTime();
        return false;
      }
      return published > 0 && System.nanoTime() - seen[1] > 100_000_000L
          && subscriber.get().stats().lastSequence() == published - 1;
    };
  }

  /** The cached tokens the index predicts for {@code prompt} on {@code state}, as vLLM counts them. */
  int predicted(PreciseCacheIndex index, EndpointState state, String prompt) throws Exception {
    InferenceRequest request = InferenceRequest.builder(MODEL).prompt(prompt).build();
    TokenizedPrompt tokenized = request.tokenize(tokenizer);
    int blockSize = state.blockSize(16);
    int[] matched = new int[1];
    index.lookup(tokenized.keys(blockSize), new EndpointState[] {state}, 1, matched);
    int usable = (tokenized.tokenCount() - 1) / blockSize;
    return Math.min(matched[0], usable) * blockSize;
  }

  /** For every probe, the index predicts exactly what the server then reports as cached. */
  void assertIndexMatchesServer(PreciseCacheIndex index, EndpointState state, List<String> probes) throws Exception {
    int hits = 0;
    for (String probe : probes) {
      awaitCaughtUp();
      int predicted = predicted(index, state, probe);
      int actual = complete(probe);
      assertThat(predicted).as("cached tokens of a probe").isEqualTo(actual);
      hits += actual > 0 ? 1 : 0;
    }
    assertThat(hits).as("probes with cached tokens").isPositive();
    assertThat(index.stats().orphanedBlocks()).isZero();
  }

  List<String> probes() {
    List<String> probes = new ArrayList<>(sent.subList(Math.max(0, sent.size() - 6), sent.size()));
    for (int i = 0; i < 4; i++) {
      probes.add(prompt());
    }
    probes.add("An unseen prompt" + words(50));
    return probes;
  }

  @ParameterizedTest
  @EnumSource(KvEventFormat.class)
  void theIndexFollowsTheServerThroughDroppedEventsAndARestart(KvEventFormat format) throws Exception {
    server = SimulatedServer.builder(MODEL)
        .timeScale(50)
        .kvEventFormat(format)
        .replayWithTopic(format == KvEventFormat.MAP)
        .maxModelLen(1024)
        .engine(e -> e.blockSize(16).numGpuBlocks(120))
        .start();
    Fleet fleet = Fleet.create();
    PreciseCacheIndex index = new PreciseCacheIndex();
    fleet.addListener(index);
    fleet.setEndpoints(List.of(server.endpoint()));
    EndpointState state = fleet.get(server.name());
    subscriptions = KvEventSubscriptions.create(index, 0,
        b -> b.receiveTimeout(Duration.ofMillis(20)).replayTimeout(Duration.ofSeconds(15))).attach(fleet);
    scraper = MetricsScraper.builder().interval(Duration.ofMillis(20)).unhealthyAfter(Duration.ofMillis(300))
        .healthInterval(Duration.ofMillis(50)).build().attach(fleet);
    await("first metrics", () -> state.metrics() != null);
    assertThat(state.blockSize(0)).isEqualTo(16);

    // 1. A workload (with evictions: the pool holds 120 blocks).
    workload(40);
    assertIndexMatchesServer(index, state, probes());
    assertThat(subscriber().stats().resyncs()).isZero();

    // 2. A range of events is lost on the live stream: the subscriber replays it.
    long from = server.nextKvEventSequence() + 2;
    server.dropKvEvents(from, from + 6);
    workload(15);
    server.stopDroppingKvEvents();
    awaitCaughtUp();
    assertThat(subscriber().stats().gaps()).isPositive();
    assertThat(subscriber().stats().repairedGaps()).isEqualTo(subscriber().stats().gaps());
    assertIndexMatchesServer(index, state, probes());

    // 3. The server is killed: the scraper marks it unhealthy; it restarts with an empty cache and sequence 0.
    server.kill(SimulatedServer.KillMode.UNREACHABLE);
    await("unhealthy", () -> state.health() == Health.UNHEALTHY);
    server.restart();
    await("healthy again", () -> state.health() == Health.HEALTHY);
    workload(20);
    awaitCaughtUp();
    KvEventSubscriber.Stats stats = subscriber().stats();
    assertThat(stats.restarts() + stats.reconnects()).isPositive();
    assertIndexMatchesServer(index, state, probes());
  }

  @Test
  void aSilentSubscriberChecksTheServerAsSoonAsItsHealthComesBack() throws Exception {
    server = SimulatedServer.builder(MODEL).timeScale(50).maxModelLen(1024)
        .engine(e -> e.blockSize(16).numGpuBlocks(120)).start();
    Fleet fleet = Fleet.create();
    PreciseCacheIndex index = new PreciseCacheIndex();
    fleet.addListener(index);
    fleet.setEndpoints(List.of(server.endpoint()));
    EndpointState state = fleet.get(server.name());
    // With the default backoff a silent socket is otherwise checked after 11 s (twice the longest backoff plus a
    // second), later than the 5 s this test allows after the health comes back. (A longer backoff would make that
    // margin wider, but a first connection that JeroMQ leaves deaf from the start also waits for the silence check.)
    subscriptions = KvEventSubscriptions.create(index, 0, b -> b.receiveTimeout(Duration.ofMillis(20))).attach(fleet);
    workload(10);
    awaitCaughtUp();

    // The live stream goes deaf (the batches stay in the replay buffer) while the endpoint is seen down and back,
    // as a metrics scraper sees a server that restarts on the same port.
    server.dropKvEvents(server.nextKvEventSequence(), Long.MAX_VALUE);
    workload(10);
    state.updateHealth(Health.UNHEALTHY, "test: down");
    Thread.sleep(200);
    state.updateHealth(Health.HEALTHY, "");
    await("the missed batches replayed", Duration.ofSeconds(5),
        () -> subscriber().stats().lastSequence() == server.nextKvEventSequence() - 1);
    server.stopDroppingKvEvents();
    assertThat(subscriber().stats().replayedBatches()).isPositive();
    assertIndexMatchesServer(index, state, probes());
  }
}
