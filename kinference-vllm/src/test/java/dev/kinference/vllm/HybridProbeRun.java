package dev.kinference.vllm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.vllm.kvevents.KvEventSubscriber;
import dev.kinference.vllm.kvevents.KvEventSubscriptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;

/**
 * What the hybrid-model end-to-end tests share: a real simulated server probed over HTTP while the real subscriber
 * follows its KV events over ZeroMQ into a {@link HybridCacheIndex}; each probe after a warm-up checks that the
 * router predicts exactly the {@code cached_tokens} the server reports. Not thread-safe: one test's run.
 */
final class HybridProbeRun implements AutoCloseable {

  /** How many probes hit, how many the other KV-cache groups cut below the full-attention group's hit. */
  record Outcome(int hits, int cutShort, KvEventSubscriber.Stats stats) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int WARM_UP = 10;

  private final String model;
  private final int block;
  private final int prefixWords;
  private final int prefixStep;
  private final int questionWords;
  private final Random random = new Random(7);
  private final List<String> prefixes = new ArrayList<>();
  private final ApproximateTokenizer tokenizer = new ApproximateTokenizer();
  private final HttpClient http = HttpClient.newHttpClient();
  private SimulatedServer server;
  private KvEventSubscriptions subscriptions;

  /**
   * @param model the served model name
   * @param block the server's block size in tokens
   * @param prefixWords words of the shortest of five shared system prompts
   * @param prefixStep words each further system prompt adds
   * @param questionWords the most words a probe's question adds to its system prompt
   */
  HybridProbeRun(String model, int block, int prefixWords, int prefixStep, int questionWords) {
    this.model = model;
    this.block = block;
    this.prefixWords = prefixWords;
    this.prefixStep = prefixStep;
    this.questionWords = questionWords;
  }

  /** Starts the server, subscribes, sends {@code probes} prompts and checks each prediction after the warm-up. */
  Outcome run(SimulatedServer started, int probes) throws Exception {
    server = started;
    assertThat(server.blockSize()).isEqualTo(block);
    Fleet fleet = Fleet.create();
    HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());
    fleet.addListener(index);
    fleet.setEndpoints(List.of(server.endpoint()));
    EndpointState state = fleet.get(server.name());
    subscriptions = KvEventSubscriptions.create(index, 0, b -> b.receiveTimeout(Duration.ofMillis(20))).attach(fleet);
    int hits = 0;
    int cutShort = 0;
    for (int i = 0; i < probes; i++) {
      String probe = prompt();
      if (i < WARM_UP) {
        complete(probe);
        continue;
      }
      await(SimulatedServerIntegrationTest.caughtUp(server, this::subscriber));
      int predicted = predicted(index, state, probe);
      int fullAttentionOnly = predicted(index.delegate(), state, probe);
      int actual = complete(probe);
      assertThat(predicted).as("cached tokens of probe %d (full attention alone: %d)", i, fullAttentionOnly)
          .isEqualTo(actual);
      hits += actual > 0 ? 1 : 0;
      cutShort += fullAttentionOnly > predicted ? 1 : 0;
    }
    return new Outcome(hits, cutShort, subscriber().stats());
  }

  @Override
  public void close() {
    if (subscriptions != null) {
      subscriptions.close();
    }
    if (server != null) {
      server.close();
    }
    http.close();
  }

  private String words(int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(" w").append(random.nextInt(5000));
    }
    return sb.toString();
  }

  private String prompt() {
    if (prefixes.isEmpty()) {
      for (int i = 0; i < 5; i++) {
        prefixes.add("System prompt " + i + ":" + words(prefixWords + prefixStep * i));
      }
    }
    return prefixes.get(random.nextInt(prefixes.size())) + " Question:" + words(random.nextInt(questionWords));
  }

  private int complete(String prompt) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", model).put("prompt", prompt).put("max_tokens", 2);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.baseUri() + "/v1/completions"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(0);
  }

  private void await(BooleanSupplier caughtUp) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!caughtUp.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for the subscriber to catch up; " + subscriber().stats());
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private KvEventSubscriber subscriber() {
    return subscriptions.subscriber(server.name());
  }

  private int predicted(CacheIndex index, EndpointState state, String prompt) throws Exception {
    TokenizedPrompt tokenized = InferenceRequest.builder(model).prompt(prompt).build().tokenize(tokenizer);
    int[] matched = new int[1];
    index.lookup(tokenized.keys(block), new EndpointState[] {state}, 1, matched);
    return Math.min(matched[0], (tokenized.tokenCount() - 1) / block) * block;
  }
}
