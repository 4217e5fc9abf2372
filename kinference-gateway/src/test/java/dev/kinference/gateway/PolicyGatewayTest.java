package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.models.messages.MessageCreateParams;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.errors.RateLimitException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.Governance;
import dev.kinference.sim.server.SimulatedServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway assembled from a YAML policy configuration ({@link PolicyGateway}): tenants with API keys, their
 * limits, a model alias with a cloud fallback, and a rule keeping personal data on local servers. The local server
 * is a simulated vLLM server with its metrics scraped; the cloud is {@link FakeCloud}.
 */
class PolicyGatewayTest {

  static final String KEY_A = "key-team-a";
  static final String KEY_B = "key-team-b";
  static final String EMAIL = "jane.doe@example.com";
  static final ObjectMapper M = new ObjectMapper();
  static SimulatedServer sim;
  static FakeCloud cloud;
  static PolicyGateway pg;
  static final HttpClient http = HttpClient.newHttpClient();

  static String config(SimulatedServer s, FakeCloud c) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: local}
        spec:
          model: %s
          endpoints:
            - id: sim-0
              url: %s
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: cloud}
        spec:
          api: anthropic
          baseUrl: %s
          apiKey: {env: TEST_CLOUD_KEY}
          models:
            - name: claude-x
              price: {input: 3.0, cachedInput: 0.3, output: 15.0}
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: chat}
        spec:
          model: chat
          targets:
            - pool: local
          fallback:
            - provider: cloud
              model: claude-x
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: team-a}
        spec:
          apiKeys:
            - name: a
              sha256: %s
          models: [chat]
          limits:
            requestsPerMinute: 3
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: team-b}
        spec:
          apiKeys:
            - name: b
              sha256: %s
          models: [chat]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: default}
        spec:
          rules:
            - name: personal-data-stays-local
              match: {personalData: true}
              action: {requireLocal: true, onSaturation: queue}
        """.formatted(Harness.MODEL, s.baseUri(), c.baseUrl(), Governance.sha256Hex(KEY_A),
        Governance.sha256Hex(KEY_B));
  }

  @BeforeAll
  static void start() throws Exception {
    sim = SimulatedServer.builder(Harness.MODEL).name("sim-0").defaultOutputTokens(8).timeScale(20)
        .kvEvents(false).start();
    cloud = new FakeCloud();
    pg = PolicyGateway.builder()
        .config(PolicyLoader.load(config(sim, cloud), "test.yaml").orThrow())
        .environment(Map.of("TEST_CLOUD_KEY", FakeCloud.KEY)::get)
        .gateway(g -> g.port(0).queueMaxWait(Duration.ofSeconds(3)).debugHeaders(true))
        .build().start();
  }

  @AfterAll
  static void stop() {
    pg.close();
    cloud.close();
    sim.close();
    http.shutdownNow();
  }

  static OpenAIClient openai(String key) {
    return OpenAIOkHttpClient.builder().baseUrl(pg.gateway().uri() + "/v1").apiKey(key).maxRetries(0)
        .timeout(Duration.ofSeconds(30)).build();
  }

  static ChatCompletionCreateParams ask(String question) {
    return ChatCompletionCreateParams.builder().model("chat").addUserMessage(question).build();
  }

  static HttpResponse<String> post(String key, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** /metrics once every answered request is recorded (regression: a scrape right after a 200 missed team-b's). */
  static String settledMetrics() throws InterruptedException {
    Harness.awaitEveryRequestRecorded(pg.gateway());
    return pg.gateway().scrapeMetrics();
  }

  @Test
  void callersAreTenantsRecognisedByTheirKeysAndSeeTheirModels() throws Exception {
    OpenAIClient nobody = openai("not-a-key");
    assertThatThrownBy(() -> nobody.chat().completions().create(ask("hi")))
        .isInstanceOf(UnauthorizedException.class).hasMessageContaining("invalid API key");
    nobody.close();
    AnthropicClient anthropicNobody = AnthropicOkHttpClient.builder().baseUrl(pg.gateway().uri().toString())
        .apiKey("wrong").maxRetries(0).build();
    assertThatThrownBy(() -> anthropicNobody.messages().create(MessageCreateParams.builder().model("chat")
        .maxTokens(10).addUserMessage("hi").build()))
        .isInstanceOf(com.anthropic.errors.UnauthorizedException.class);
    anthropicNobody.close();

    HttpResponse<String> models = http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/models"))
        .header("x-api-key", KEY_B).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(M.readTree(models.body()).path("data")).hasSize(1);
    assertThat(M.readTree(models.body()).path("data").get(0).path("id").asText()).isEqualTo("chat");

    OpenAIClient b = openai(KEY_B);
    ChatCompletion c = b.chat().completions().create(ask("Name a colour."));
    assertThat(c.choices().get(0).message().content()).isPresent();
    b.close();
    assertThat(settledMetrics()).contains("kinference_gateway_requests_total{tenant=\"team-b\",model=\"chat\"");
  }

  @Test
  void aTenantOverItsRequestLimitGets429WithRetryAfterInItsApisFormat() throws Exception {
    OpenAIClient a = openai(KEY_A);
    for (int i = 0; i < 3; i++) {
      a.chat().completions().create(ask("Request " + i));
    }
    assertThatThrownBy(() -> a.chat().completions().create(ask("One too many")))
        .isInstanceOf(RateLimitException.class).hasMessageContaining("requestsPerMinute");
    a.close();
    HttpResponse<String> raw = post(KEY_A, "{\"model\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    assertThat(raw.statusCode()).isEqualTo(429);
    assertThat(raw.headers().firstValue("retry-after")).isPresent();
    assertThat(M.readTree(raw.body()).path("error").path("type").asText()).isEqualTo("rate_limit_error");
    assertThat(settledMetrics())
        .contains("kinference_gateway_rate_limit_refusals_total{tenant=\"team-a\",model=\"chat\"} 2");
  }

  @Test
  void personalDataStaysLocalWhileOtherTrafficOverflowsToTheCloud() throws Exception {
    sim.kill(SimulatedServer.KillMode.UNREACHABLE);
    try {
      StreamFailureTest.awaitTrue(() -> pg.fleet().get("sim-0").health() == Health.UNHEALTHY,
          "the scraper sees the server gone");
      OpenAIClient b = openai(KEY_B);
      try (HttpResponseFor<ChatCompletion> r = b.chat().completions().withRawResponse()
          .create(ask("What is the capital of France?"))) {
        assertThat(r.parse().choices().get(0).message().content()).contains(FakeCloud.TEXT);
        assertThat(r.headers().values("x-kinference-endpoint")).containsExactly("external:cloud/claude-x");
      }
      b.close();

      String pii = "{\"model\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"My email is " + EMAIL
          + ", please summarise my account.\"}]}";
      HttpResponse<String> refused = post(KEY_B, pii);
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).isPresent();
      assertThat(cloud.requestsMentioning(EMAIL)).isZero();

      // Queued, not refused, while the local server comes back within the queue's wait.
      CompletableFuture<HttpResponse<String>> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return post(KEY_B, pii);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      StreamFailureTest.awaitTrue(() -> pg.gateway().queuedRequests() == 1, "the request waits in the queue");
      sim.restart();
      HttpResponse<String> served = waiting.get();
      assertThat(served.statusCode()).isEqualTo(200);
      assertThat(served.headers().firstValue("x-kinference-endpoint")).contains("sim-0");
      assertThat(cloud.requestsMentioning(EMAIL)).isZero();
      assertThat(settledMetrics())
          .contains("kinference_gateway_queued_total{tenant=\"team-b\",outcome=\"timeout\"} 1")
          .contains("kinference_gateway_queued_total{tenant=\"team-b\",outcome=\"dispatched\"} 1");
    } finally {
      if (!sim.isAlive()) {
        sim.restart();
      }
    }
    StreamFailureTest.awaitTrue(() -> pg.fleet().get("sim-0").health() == Health.HEALTHY, "healthy again");
  }
}
