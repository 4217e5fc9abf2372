package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a gateway tells the outside by default. Regressions: debug headers naming the internal endpoint were on with
 * no way to turn them off, and the response's {@code model} was the internal server model although the client used
 * an alias. And no API key or prompt text reaches the logs or the metrics.
 */
class SecurityDefaultsTest {

  static final String KEY = "sk-tenant-secret-4242";
  static final String PROMPT = "my confidential quarterly forecast 9f3a";
  static SimulatedServer sim;
  static PolicyGateway pg;

  @BeforeAll
  static void start() throws Exception {
    sim = SimulatedServer.builder(Harness.MODEL).name("internal-node-7").timeScale(20).kvEvents(false).start();
    String yaml = TestPolicies.pool(Harness.MODEL, TestPolicies.endpoints(java.util.List.of(sim))) + """
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: assistant}
        spec:
          model: assistant
          targets:
            - pool: local
        """ + TestPolicies.tenant("acme", KEY);
    pg = PolicyGateway.builder().config(PolicyLoader.load(yaml, "security.yaml").orThrow())
        .gateway(g -> g.port(0)).build().start();
  }

  @AfterAll
  static void stop() {
    pg.close();
    sim.close();
  }

  static HttpResponse<String> chat(boolean stream) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
          .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"assistant\",\"max_tokens\":5,\"stream\":" + stream
              + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT + "\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }

  @Test
  void noDebugHeadersAndTheModelIsTheOneTheClientAskedFor() throws Exception {
    HttpResponse<String> r = chat(false);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().map().keySet()).noneMatch(h -> h.toLowerCase(java.util.Locale.ROOT).startsWith("x-kinference"));
    assertThat(r.body()).contains("\"model\":\"assistant\"").doesNotContain(Harness.MODEL);
    HttpResponse<String> s = chat(true);
    assertThat(s.statusCode()).isEqualTo(200);
    assertThat(s.body()).contains("\"model\":\"assistant\"").doesNotContain(Harness.MODEL);
  }

  @Test
  void apiKeysAndPromptTextNeverReachTheLogsOrTheMetrics() throws Exception {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      chat(false);
      chat(true);
      Harness.awaitEveryRequestRecorded(pg.gateway());
    } finally {
      System.setErr(err);
    }
    String logs = captured.toString(StandardCharsets.UTF_8);
    assertThat(logs).as("the access log ran").contains("tenant=acme");
    assertThat(logs).doesNotContain(KEY).doesNotContain(PROMPT).doesNotContain("9f3a");
    assertThat(pg.gateway().scrapeMetrics()).doesNotContain(KEY).doesNotContain("9f3a");
  }
}
