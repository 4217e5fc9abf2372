package dev.kinference.vllm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.server.KvEventFormat;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.vllm.kvevents.HybridCacheIndex;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A simulated server of the default model (Qwen3.5-27B's shape: three Mamba KV-cache groups 0-2 of its
 * linear-attention layers and the full-attention group 3, 784-token blocks, vLLM's {@code mamba_cache_mode} align)
 * publishes each group's events over real ZeroMQ in vLLM's format; the real subscriber and {@link HybridCacheIndex}
 * then predict exactly the cached tokens the server reports for every probe, although the full-attention group alone
 * would often predict more (no Mamba state is cached at the block where its hit ends).
 */
class MambaSimulatedServerTest {

  static final String MODEL = "sim-qwen3.5";
  static final ObjectMapper JSON = new ObjectMapper();
  static final int BLOCK = 784;

  final Random random = new Random(7);
  final List<String> prefixes = new ArrayList<>();
  final ApproximateTokenizer tokenizer = new ApproximateTokenizer();
  final HttpClient http = HttpClient.newHttpClient();
  SimulatedServer server;
  KvEventSubscriptions subscriptions;

  @AfterEach
  void close() {
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
      sb.append(" w").append(random.nextInt(5000));
    }
    return sb.toString();
  }

  String prompt() {
    if (prefixes.isEmpty()) {
      for (int i = 0; i < 5; i++) {
        prefixes.add("System prompt " + i + ":" + words(500 + 250 * i));
      }
    }
    return prefixes.get(random.nextInt(prefixes.size())) + " Question:" + words(random.nextInt(700));
  }

  int complete(String prompt) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", prompt).put("max_tokens", 2);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.baseUri() + "/v1/completions"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(0);
  }

  void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; subscriber " + subscriber().stats());
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

  void awaitCaughtUp() {
    await("subscriber caught up", SimulatedServerIntegrationTest.caughtUp(server, this::subscriber));
  }

  int predicted(CacheIndex index, EndpointState state, String prompt) throws Exception {
    TokenizedPrompt tokenized = InferenceRequest.builder(MODEL).prompt(prompt).build().tokenize(tokenizer);
    int[] matched = new int[1];
    index.lookup(tokenized.keys(BLOCK), new EndpointState[] {state}, 1, matched);
    return Math.min(matched[0], (tokenized.tokenCount() - 1) / BLOCK) * BLOCK;
  }

  @ParameterizedTest
  @EnumSource(KvEventFormat.class)
  void theRouterCountsTheHitTheHybridEngineUses(KvEventFormat format) throws Exception {
    server = SimulatedServer.builder(MODEL).timeScale(50).kvEventFormat(format).maxModelLen(16_384)
        .engine(e -> e.model(ModelSpec.QWEN3_5_27B_FP8_MAMBA_ALIGN).numGpuBlocks(120).maxNumBatchedTokens(2048))
        .start();
    assertThat(server.blockSize()).isEqualTo(BLOCK);
    Fleet fleet = Fleet.create();
    HybridCacheIndex index = HybridCacheIndex.wrap(new PreciseCacheIndex());
    fleet.addListener(index);
    fleet.setEndpoints(List.of(server.endpoint()));
    EndpointState state = fleet.get(server.name());
    subscriptions = KvEventSubscriptions.create(index, 0, b -> b.receiveTimeout(Duration.ofMillis(20))).attach(fleet);

    int hits = 0;
    int cutByState = 0;
    for (int i = 0; i < 60; i++) {
      String probe = prompt();
      if (i >= 10) {
        awaitCaughtUp();
        int predicted = predicted(index, state, probe);
        int fullAttentionOnly = predicted(index.delegate(), state, probe);
        int actual = complete(probe);
        assertThat(predicted).as("cached tokens of probe %d (%d tokens; full attention alone: %d)", i,
            InferenceRequest.builder(MODEL).prompt(probe).build().tokenize(tokenizer).tokenCount(), fullAttentionOnly)
            .isEqualTo(actual);
        hits += actual > 0 ? 1 : 0;
        cutByState += fullAttentionOnly > predicted ? 1 : 0;
      } else {
        complete(probe);
      }
    }
    assertThat(hits).as("probes with cached tokens").isPositive();
    assertThat(cutByState).as("probes whose full-attention hit the Mamba groups cut short").isPositive();
    assertThat(subscriber().stats().skippedEvents()).as("Mamba groups' events, kept apart").isPositive();
    // one clear only: the first events name Mamba group 0, indexed until full-attention group 3 turns up
    assertThat(subscriber().stats().resyncs()).isEqualTo(1);
  }
}
