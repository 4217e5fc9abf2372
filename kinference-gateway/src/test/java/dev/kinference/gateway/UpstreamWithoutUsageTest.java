package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.accounting.UsageRecord;
import dev.kinference.policy.config.PolicyLoader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression: an upstream stream that sent no usage was charged by the limiter but recorded as 0 tokens and $0 in
 * the metrics. Now it is charged, recorded and logged as its prompt plus the tokens it streamed, counted from the
 * chunks. The upstream is a real HTTP server speaking vLLM's chat-completion chunks, never with a usage chunk.
 */
class UpstreamWithoutUsageTest {

  static final int TOKENS = 12;
  static Server upstream;
  static PolicyGateway pg;

  @BeforeAll
  static void start() throws Exception {
    upstream = new Server();
    ServerConnector c = new ServerConnector(upstream);
    c.setHost("127.0.0.1");
    c.setPort(0);
    upstream.addConnector(c);
    upstream.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        StringBuilder sse = new StringBuilder();
        String head = "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"delta\":";
        sse.append("data: ").append(head).append("{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
        for (int i = 0; i < TOKENS; i++) {
          sse.append("data: ").append(head).append("{\"content\":\"w").append(i).append(" \"},\"finish_reason\":null}]}\n\n");
        }
        sse.append("data: ").append(head).append("{},\"finish_reason\":\"stop\"}]}\n\n");
        sse.append("data: [DONE]\n\n");
        response.setStatus(200);
        response.getHeaders().put("content-type", "text/event-stream");
        response.write(true, ByteBuffer.wrap(sse.toString().getBytes(StandardCharsets.UTF_8)), callback);
        return true;
      }
    });
    upstream.start();
    String yaml = TestPolicies.pool("m", java.util.Map.of("no-usage", "http://127.0.0.1:" + c.getLocalPort()),
        "price: {input: 1.0, output: 1000000.0}")
        + TestPolicies.tenant("acme", "k", "limits: {tokensPerMinute: 100000}");
    pg = PolicyGateway.builder().config(PolicyLoader.load(yaml, "no-usage.yaml").orThrow())
        .scrapeInterval(java.time.Duration.ofSeconds(30)).kvEvents(false)
        .gateway(g -> g.port(0)).build().start();
  }

  @AfterAll
  static void stop() throws Exception {
    pg.close();
    upstream.stop();
  }

  @Test
  void aStreamWithoutUsageIsChargedItsPromptAndTheTokensItStreamed() throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
          .header("Authorization", "Bearer k").header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true,\"max_tokens\":100,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"count for me please\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).contains("[DONE]");
    }
    Harness.awaitEveryRequestRecorded(pg.gateway());
    List<UsageRecord> records = pg.governance().accounting().snapshot().query("acme", null);
    assertThat(records).singleElement().satisfies(u -> {
      assertThat(u.outputTokens()).as("one token per content chunk; role and finish chunks carry none")
          .isEqualTo(TOKENS);
      assertThat(u.inputTokens()).as("the prompt as the router counted it").isPositive();
      assertThat(u.costMicros()).as("12 output tokens at 1,000,000 per million").isGreaterThanOrEqualTo(12_000_000);
    });
    String metrics = pg.gateway().scrapeMetrics();
    assertThat(metrics).containsPattern("kinference_gateway_tokens_total\\{tenant=\"acme\",model=\"m\",endpoint=\"no-usage\","
        + "type=\"output\"} 12(\\.0)?\\n");
    assertThat(metrics).containsPattern("kinference_gateway_cost_total\\{tenant=\"acme\",model=\"m\",endpoint=\"no-usage\"} 12\\.");
  }
}
