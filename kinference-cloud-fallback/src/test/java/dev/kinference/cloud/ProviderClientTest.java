package dev.kinference.cloud;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.plugin.Plugins;
import dev.kinference.request.ApiFormat;
import dev.kinference.routing.Usage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A real HTTP server on loopback plays an Anthropic-format provider; the client speaks OpenAI. */
class ProviderClientTest {

  private static final ObjectMapper M = new ObjectMapper();
  private Server server;
  private int port;
  private final List<Map<String, String>> seenHeaders = new CopyOnWriteArrayList<>();
  private final List<JsonNode> seenBodies = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    server = new Server();
    server.setStopTimeout(0);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        JsonNode body = M.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
        seenBodies.add(body);
        seenHeaders.add(Map.of("x-api-key", String.valueOf(request.getHeaders().get("x-api-key")),
            "anthropic-version", String.valueOf(request.getHeaders().get("anthropic-version"))));
        String out;
        if (body.path("stream").asBoolean(false)) {
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
          out = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":"
              + "\"claude-real\",\"usage\":{\"input_tokens\":11,\"output_tokens\":0}}}\n\n"
              + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
              + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
              + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
              + "\"delta\":{\"type\":\"text_delta\",\"text\":\"Bonjour\"}}\n\n"
              + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
              + "\"usage\":{\"output_tokens\":2}}\n\n"
              + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        } else if (body.path("max_tokens").asInt() == 13) {
          response.setStatus(429);
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
          out = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"too fast\"}}";
        } else {
          response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
          out = "{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-real\","
              + "\"content\":[{\"type\":\"text\",\"text\":\"Bonjour\"}],\"stop_reason\":\"end_turn\","
              + "\"usage\":{\"input_tokens\":1000000,\"output_tokens\":1000000}}";
        }
        Content.Sink.write(response, true, out, callback);
        return true;
      }
    });
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
  }

  private ExternalProviders providers(Map<String, String> env) {
    CloudProvider p = CloudProvider.builder("claude-cloud").api("anthropic")
        .baseUri("http://127.0.0.1:" + port)
        .apiKeyEnv("TEST_ANTHROPIC_KEY")
        .model("big", "claude-real", new Prices(3, 0.3, 15))
        .build();
    return ExternalProviders.builder().provider(p).environment(env::get).build();
  }

  private static ObjectNode chat(int maxTokens) throws Exception {
    return (ObjectNode) M.readTree("{\"model\":\"big\",\"max_tokens\":" + maxTokens
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in French\"}]}");
  }

  @Test
  void endpointsAreExternalAndNamedProviderSlashModel() {
    ExternalProviders ps = providers(Map.of("TEST_ANTHROPIC_KEY", "k"));
    Endpoint e = ps.endpoints().get(0);
    assertThat(e.id()).isEqualTo("external:claude-cloud/big");
    assertThat(e.isExternal()).isTrue();
    assertThat(e.label(CloudProvider.PROVIDER_MODEL_LABEL)).isEqualTo("claude-real");
    assertThat(ps.problems()).isEmpty();
    assertThat(Plugins.load(ProviderApi.class).names()).containsExactly("anthropic", "openai");
  }

  @Test
  void openAiRequestIsTranslatedSentWithTheKeyFromTheEnvironmentAndAnsweredInOpenAiFormat() throws Exception {
    ExternalProviders ps = providers(Map.of("TEST_ANTHROPIC_KEY", "secret-1"));
    ProviderResponse r = ProviderClient.create(ps).send(ps.endpoints().get(0), ApiFormat.OPENAI_CHAT, chat(20))
        .join();
    assertThat(r.status()).isEqualTo(200);
    assertThat(seenHeaders.get(0)).containsEntry("x-api-key", "secret-1").containsEntry("anthropic-version",
        AnthropicApi.VERSION);
    assertThat(seenBodies.get(0).path("model").asText()).isEqualTo("claude-real");
    JsonNode body = M.readTree(r.body());
    assertThat(body.path("choices").get(0).path("message").path("content").asText()).isEqualTo("Bonjour");
    assertThat(r.usage()).isEqualTo(new Usage(1_000_000, 0, 1_000_000));
    assertThat(r.cost()).isEqualTo(18.0);
  }

  @Test
  void streamArrivesAsOpenAiChunksWithUsage() throws Exception {
    ExternalProviders ps = providers(Map.of("TEST_ANTHROPIC_KEY", "k"));
    ByteArrayOutputStream events = new ByteArrayOutputStream();
    ObjectNode body = chat(20);
    body.putObject("stream_options").put("include_usage", true);
    ProviderResponse r = ProviderClient.create(ps).stream(ps.endpoints().get(0), ApiFormat.OPENAI_CHAT, body,
        events::writeBytes).join();
    String text = events.toString(StandardCharsets.UTF_8);
    assertThat(text).contains("\"content\":\"Bonjour\"").contains("\"finish_reason\":\"stop\"")
        .endsWith("data: [DONE]\n\n");
    assertThat(r.usage()).isEqualTo(new Usage(11, 0, 2));
  }

  @Test
  void providerErrorsComeBackInTheClientsFormatWithTheirStatus() throws Exception {
    ExternalProviders ps = providers(Map.of("TEST_ANTHROPIC_KEY", "k"));
    ProviderResponse r = ProviderClient.create(ps).send(ps.endpoints().get(0), ApiFormat.OPENAI_CHAT, chat(13))
        .join();
    assertThat(r.status()).isEqualTo(429);
    assertThat(M.readTree(r.body()).path("error").path("message").asText()).isEqualTo("too fast");
  }

  @Test
  void aMissingKeyMakesTheProviderUnavailableAndIsReported() throws Exception {
    ExternalProviders ps = providers(Map.of());
    assertThat(ps.problems()).singleElement().asString().contains("TEST_ANTHROPIC_KEY");
    assertThatThrownBy(() -> ProviderClient.create(ps).send(ps.endpoints().get(0), ApiFormat.OPENAI_CHAT, chat(5))
        .join()).isInstanceOf(CompletionException.class).hasCauseInstanceOf(ProviderUnavailableException.class);
    assertThat(seenBodies).isEmpty();
  }

  @Test
  void completionsCannotGoToAnAnthropicProvider() throws Exception {
    ExternalProviders ps = providers(Map.of("TEST_ANTHROPIC_KEY", "k"));
    ObjectNode body = (ObjectNode) M.readTree("{\"model\":\"big\",\"prompt\":\"x\"}");
    assertThatThrownBy(() -> ps.prepare(ps.endpoints().get(0), ApiFormat.OPENAI_COMPLETIONS, body))
        .isInstanceOf(UnsupportedTranslationException.class);
  }

  @Test
  void keysAreNeverAcceptedAsHeadersOrInvalidNames() {
    assertThatThrownBy(() -> CloudProvider.builder("p").header("Authorization", "Bearer x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> CloudProvider.builder("Bad Name")).isInstanceOf(IllegalArgumentException.class);
  }
}
