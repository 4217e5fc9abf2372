package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.Governance;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Embeddings, rerank, score, tokenize and detokenize through the gateway to simulated vLLM servers. */
class PoolingTest {

  static final String KEY = "key-small";
  static final ObjectMapper MAPPER = new ObjectMapper();
  static Harness h;
  static Harness governed;

  @BeforeAll
  static void start() {
    h = Harness.builder().servers(3).start();
    Governance governance = Governance.of(PolicyLoader.load("""
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: small}
        spec:
          apiKeys: [{sha256: %s}]
          models: ["*"]
          limits: {tokensPerMinute: 300, defaultMaxTokens: 16}
        """.formatted(Governance.sha256Hex(KEY)), "small.yaml").orThrow());
    governed = Harness.builder().servers(2).router(r -> r.policyEngine(governance.engine()))
        .gateway(g -> g.guard(GovernanceGuard.of(governance))).start();
  }

  @AfterAll
  static void stop() {
    h.close();
    governed.close();
  }

  @Test
  void theOpenAiSdksEmbeddingsClientGetsVectorsAndUsage() {
    OpenAIClient openai = h.openai();
    CreateEmbeddingResponse one = openai.embeddings().create(EmbeddingCreateParams.builder().model(Harness.MODEL)
        .input("The quick brown fox jumps over the lazy dog.").build());
    assertThat(one.data()).hasSize(1);
    assertThat(one.data().get(0).embedding()).hasSizeGreaterThan(1);
    assertThat(one.usage().promptTokens()).isPositive();
    assertThat(one.model()).isEqualTo(Harness.MODEL);

    CreateEmbeddingResponse three = openai.embeddings().create(EmbeddingCreateParams.builder().model(Harness.MODEL)
        .inputOfArrayOfStrings(List.of("alpha", "beta gamma", "delta epsilon zeta")).build());
    assertThat(three.data()).extracting(d -> d.index()).containsExactly(0L, 1L, 2L);
    assertThat(three.usage().totalTokens()).isGreaterThan(one.usage().totalTokens() / 10);
  }

  @Test
  void embeddingsAreSpreadByLoadAcrossTheServers() throws Exception {
    Set<String> servers = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      HttpResponse<String> r = h.post("/v1/embeddings",
          "{\"model\":\"" + Harness.MODEL + "\",\"input\":\"same text every time\"}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      servers.add(r.headers().firstValue("x-kinference-endpoint").orElseThrow());
    }
    assertThat(servers).as("no prefix term pins equal inputs to one server").hasSizeGreaterThan(1);
  }

  @Test
  void rerankOnBothPaths() throws Exception {
    for (String path : List.of("/v1/rerank", "/rerank")) {
      HttpResponse<String> r = h.post(path, """
          {"model":"%s","query":"capital of France",
           "documents":["Paris is the capital of France.","Bananas are yellow.",{"text":"France is in Europe."}],
           "top_n":2}""".formatted(Harness.MODEL));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.headers().firstValue("x-kinference-endpoint").orElseThrow()).startsWith("vllm-");
      JsonNode json = MAPPER.readTree(r.body());
      assertThat(json.path("results")).hasSize(2);
      assertThat(json.path("results").get(0).path("index").asInt()).isZero();
      assertThat(json.path("results").get(0).path("document").path("text").asText()).startsWith("Paris");
      assertThat(json.path("usage").path("total_tokens").asInt()).isPositive();
    }
  }

  @Test
  void scoreOnBothPaths() throws Exception {
    for (String path : List.of("/v1/score", "/score")) {
      HttpResponse<String> r = h.post(path, """
          {"model":"%s","text_1":"What is the capital of France?",
           "text_2":["The capital of France is Paris.","Bananas are yellow."]}""".formatted(Harness.MODEL));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonNode json = MAPPER.readTree(r.body());
      assertThat(json.path("object").asText()).isEqualTo("list");
      assertThat(json.path("data")).hasSize(2);
      assertThat(json.path("data").get(0).path("object").asText()).isEqualTo("score");
      assertThat(json.path("data").get(0).path("score").asDouble())
          .isGreaterThan(json.path("data").get(1).path("score").asDouble());
      assertThat(json.path("usage").path("prompt_tokens").asInt()).isPositive();
    }
  }

  @Test
  void tokenizeAndDetokenize() throws Exception {
    HttpResponse<String> t = h.post("/tokenize", "{\"model\":\"" + Harness.MODEL + "\",\"prompt\":\"Hello there\"}");
    assertThat(t.statusCode()).as(t.body()).isEqualTo(200);
    JsonNode tokens = MAPPER.readTree(t.body());
    assertThat(tokens.path("count").asInt()).isPositive().isEqualTo(tokens.path("tokens").size());
    HttpResponse<String> noModel = h.post("/tokenize", "{\"prompt\":\"Hello there\"}");
    assertThat(noModel.statusCode()).as("one model served: it is the default").isEqualTo(200);
    HttpResponse<String> d = h.post("/detokenize",
        "{\"model\":\"" + Harness.MODEL + "\",\"tokens\":" + tokens.path("tokens") + "}");
    assertThat(d.statusCode()).as(d.body()).isEqualTo(200);
    assertThat(MAPPER.readTree(d.body()).path("prompt").asText()).isNotEmpty();
  }

  @Test
  void anUnknownModelIsAnOpenAiFormat404() throws Exception {
    for (String path : List.of("/v1/embeddings", "/v1/rerank", "/v1/score", "/tokenize")) {
      HttpResponse<String> r = h.post(path,
          "{\"model\":\"no-such-model\",\"input\":\"x\",\"query\":\"q\",\"documents\":[\"d\"],"
              + "\"text_1\":\"a\",\"text_2\":\"b\",\"prompt\":\"p\"}");
      assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(404);
      JsonNode error = MAPPER.readTree(r.body()).path("error");
      assertThat(error.path("message").asText()).contains("no-such-model");
      assertThat(error.has("type")).isTrue();
    }
    HttpResponse<String> missing = h.post("/v1/embeddings", "{\"model\":\"" + Harness.MODEL + "\"}");
    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(MAPPER.readTree(missing.body()).path("error").path("message").asText()).contains("input");
  }

  @Test
  void aTenantsTokenLimitCountsEmbeddingInput() throws Exception {
    HttpResponse<String> anonymous = governed.post("/v1/embeddings",
        "{\"model\":\"" + Harness.MODEL + "\",\"input\":\"hi\"}");
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(MAPPER.readTree(anonymous.body()).path("error").isObject()).isTrue();

    String input = "word ".repeat(60).trim();
    String body = "{\"model\":\"" + Harness.MODEL + "\",\"input\":\"" + input + "\"}";
    HttpResponse<String> first = governed.post("/v1/embeddings", body, "Authorization", "Bearer " + KEY);
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    int perRequest = MAPPER.readTree(first.body()).path("usage").path("prompt_tokens").asInt();
    assertThat(perRequest).isGreaterThan(30);
    int ok = 1;
    HttpResponse<String> last = first;
    for (int i = 0; i < 20 && last.statusCode() == 200; i++) {
      last = governed.post("/v1/embeddings", body, "Authorization", "Bearer " + KEY);
      if (last.statusCode() == 200) {
        ok++;
      }
    }
    assertThat(last.statusCode()).as(last.body()).isEqualTo(429);
    assertThat(last.headers().firstValue("retry-after")).isPresent();
    assertThat(MAPPER.readTree(last.body()).path("error").path("message").asText()).isNotBlank();
    assertThat(ok).as("300 tokens a minute hold about %d requests of %d tokens", 300 / perRequest, perRequest)
        .isBetween(300 / (perRequest + 1) - 1, 300 / perRequest + 1);
  }
}
