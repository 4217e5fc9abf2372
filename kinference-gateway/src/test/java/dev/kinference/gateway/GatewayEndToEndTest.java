package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The gateway in front of three simulated vLLM servers, called with the official OpenAI and Anthropic SDKs. */
class GatewayEndToEndTest {

  static final ObjectMapper M = new ObjectMapper();
  static Harness h;
  static OpenAIClient openai;
  static AnthropicClient anthropic;

  @BeforeAll
  static void start() {
    h = Harness.builder().start();
    openai = h.openai();
    anthropic = h.anthropic();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static ChatCompletionCreateParams.Builder chat(String question) {
    return ChatCompletionCreateParams.builder().model(Harness.MODEL).addSystemMessage("You are terse.")
        .addUserMessage(question);
  }

  @Test
  void openAiChatIsAnsweredByOneOfTheServersWithItsUsage() {
    try (HttpResponseFor<ChatCompletion> raw = openai.chat().completions().withRawResponse()
        .create(chat("Name a colour.").build())) {
      ChatCompletion c = raw.parse();
      assertThat(c.model()).isEqualTo(Harness.MODEL);
      assertThat(c.choices().get(0).message().content().orElseThrow()).isNotBlank();
      assertThat(c.usage().orElseThrow().completionTokens()).isEqualTo(8);
      assertThat(raw.headers().values("x-kinference-endpoint")).singleElement().asString().startsWith("vllm-");
    }
  }

  @Test
  void openAiStreamArrivesChunkByChunkWithTheUsageChunkOnlyWhenAsked() {
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(
        chat("Count to eight.").build())) {
      s.stream().forEach(chunks::add);
    }
    assertThat(chunks.size()).isGreaterThanOrEqualTo(2);
    assertThat(chunks).allMatch(c -> c.usage().isEmpty());
    StringBuilder text = new StringBuilder();
    chunks.forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
    assertThat(text.toString().trim().split(" ")).hasSize(8);
    assertThat(chunks.get(chunks.size() - 1).choices().get(0).finishReason()).isPresent();

    List<ChatCompletionChunk> withUsage = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(
        chat("Count to eight.").streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
            .build())) {
      s.stream().forEach(withUsage::add);
    }
    assertThat(withUsage.get(withUsage.size() - 1).usage().orElseThrow().completionTokens()).isEqualTo(8);
  }

  @Test
  void completionsPassThrough() {
    Completion c = openai.completions().create(CompletionCreateParams.builder()
        .model(CompletionCreateParams.Model.of(Harness.MODEL)).prompt("Once upon a time").maxTokens(5).build());
    assertThat(c.choices().get(0).text()).isNotBlank();
    assertThat(c.usage().orElseThrow().completionTokens()).isEqualTo(5);
  }

  static MessageCreateParams.Builder message() {
    return MessageCreateParams.builder().model(Harness.MODEL).maxTokens(64).system("Be brief.")
        .addUserMessage("Why is the sky blue?");
  }

  @Test
  void anthropicMessagesArePassedToTheServersNativeEndpoint() {
    Message m = anthropic.messages().create(message().build());
    assertThat(m.content().get(0).asText().text()).isNotBlank();
    assertThat(m.stopReason()).contains(StopReason.END_TURN);
    assertThat(m.usage().outputTokens()).isEqualTo(8);
  }

  @Test
  void anthropicStreamAccumulatesIntoAMessage() {
    MessageAccumulator acc = MessageAccumulator.create();
    try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> s =
        anthropic.messages().createStreaming(message().build())) {
      s.stream().forEach(acc::accumulate);
    }
    Message m = acc.message();
    assertThat(m.content().get(0).asText().text()).isNotBlank();
    assertThat(m.usage().outputTokens()).isEqualTo(8);
    assertThat(m.stopReason()).contains(StopReason.END_TURN);
  }

  @Test
  void aPromptLargerThanTheInlineLimitIsAnsweredAndCounted() {
    String question = "Why is the sky blue? ".repeat(GatewayHandler.INLINE_BODY_BYTES / 20 * 4);
    ChatCompletion c = openai.chat().completions().create(chat(question).build());
    assertThat(c.choices().get(0).message().content().orElseThrow()).isNotBlank();
    assertThat(c.usage().orElseThrow().promptTokens()).isGreaterThan(GatewayHandler.INLINE_BODY_BYTES / 8);
    long n = anthropic.messages().countTokens(MessageCountTokensParams.builder().model(Harness.MODEL)
        .addUserMessage(question).build()).inputTokens();
    assertThat(n).isGreaterThan(GatewayHandler.INLINE_BODY_BYTES / 8);
  }

  @Test
  void requestsPipelinedOnOneConnectionAreAllAnsweredInOrder() throws Exception {
    // Each answer completes on the thread that read it from the upstream, which then resumes the client connection
    // (GatewayThreadPool): the requests already waiting in the connection's buffer must be found and answered.
    int requests = 5;
    StringBuilder pipeline = new StringBuilder();
    for (int i = 0; i < requests; i++) {
      // Each question is longer than the one before, so the answers' prompt token counts show their order.
      String body = "{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\","
          + "\"content\":\"" + "Why is the sky blue? ".repeat(1 + 3 * i) + "\"}]}";
      pipeline.append("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
          .append("Content-Length: ").append(body.getBytes(StandardCharsets.UTF_8).length).append("\r\n\r\n")
          .append(body);
    }
    try (Socket socket = new Socket(h.gateway.uri().getHost(), h.gateway.uri().getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(pipeline.toString().getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().flush();
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      int previousPromptTokens = 0;
      for (int i = 0; i < requests; i++) {
        String status = readLine(in);
        assertThat(status).as("response %d", i).startsWith("HTTP/1.1 200");
        int length = -1;
        for (String header = readLine(in); !header.isEmpty(); header = readLine(in)) {
          if (header.regionMatches(true, 0, "Content-Length:", 0, 15)) {
            length = Integer.parseInt(header.substring(15).trim());
          }
        }
        assertThat(length).as("response %d has a Content-Length", i).isPositive();
        byte[] body = new byte[length];
        in.readFully(body);
        JsonNode answer = M.readTree(body);
        assertThat(answer.path("object").asText()).isEqualTo("chat.completion");
        int promptTokens = answer.path("usage").path("prompt_tokens").asInt();
        assertThat(promptTokens).as("answer %d", i).isGreaterThan(previousPromptTokens);
        previousPromptTokens = promptTokens;
      }
    }
  }

  @Test
  void http2ClientsAreServedWithConcurrentStreams() throws Exception {
    // h2c: the first request upgrades the connection; the streams sent at once are multiplexed by the client.
    try (HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
      HttpResponse<String> models = h2.send(HttpRequest.newBuilder(URI.create(h.gateway.uri() + "/v1/models")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(models.version()).isEqualTo(HttpClient.Version.HTTP_2);
      List<CompletableFuture<HttpResponse<String>>> streams = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        String body = "{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":" + (2 + i) + ",\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"Q" + i
            + "\"}]}";
        streams.add(h2.sendAsync(HttpRequest.newBuilder(URI.create(h.gateway.uri() + "/v1/chat/completions"))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString()));
      }
      for (int i = 0; i < streams.size(); i++) {
        HttpResponse<String> r = streams.get(i).get(30, TimeUnit.SECONDS);
        assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"completion_tokens\":").endsWith("data: [DONE]\n\n");
      }
    }
  }

  @Test
  void connectionsToTheServersAreCarriedByTheGatewaysOwnIoThreads() {
    // One event loop per core for both sides (UpstreamConnector): the upstream client runs no selector of its own.
    assertThat(openai.chat().completions().create(chat("Who carries this?").build()).choices()).hasSize(1);
    // Threads waiting in a Jetty selector's select(); the gateway's own show that the frame looked for is there.
    List<String> selecting = Thread.getAllStackTraces().entrySet().stream()
        .filter(e -> java.util.Arrays.stream(e.getValue()).anyMatch(f ->
            f.getClassName().startsWith("org.eclipse.jetty.io.ManagedSelector") && f.getMethodName().equals("select")))
        .map(e -> e.getKey().getName()).toList();
    assertThat(selecting).anyMatch(name -> name.startsWith("kinference-gateway"))
        .noneMatch(name -> name.startsWith("kinference-upstream"));
  }

  private static String readLine(DataInputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new EOFException("connection closed after: " + line);
      }
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }

  @Test
  void countTokensUsesTheRoutersTokenizer() {
    long n = anthropic.messages().countTokens(MessageCountTokensParams.builder().model(Harness.MODEL)
        .addUserMessage("Why is the sky blue?").build()).inputTokens();
    assertThat(n).isPositive();
  }

  @Test
  void unknownModelIs404InTheFormatOfEachApi() throws Exception {
    assertThatThrownBy(() -> openai.chat().completions().create(chat("hi").model("no-such-model").build()))
        .isInstanceOf(NotFoundException.class).hasMessageContaining("no-such-model");
    assertThatThrownBy(() -> anthropic.messages().create(message().model("no-such-model").build()))
        .isInstanceOf(com.anthropic.errors.NotFoundException.class).hasMessageContaining("no-such-model");
    HttpResponse<String> r = h.post("/v1/messages",
        "{\"model\":\"nope\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(r.statusCode()).isEqualTo(404);
    JsonNode body = M.readTree(r.body());
    assertThat(body.path("type").asText()).isEqualTo("error");
    assertThat(body.path("error").path("type").asText()).isEqualTo("not_found_error");
  }

  @Test
  void malformedBodiesAre400WithTheFieldNamedAndOversizedOnes413() throws Exception {
    HttpResponse<String> notJson = h.post("/v1/chat/completions", "{not json");
    assertThat(notJson.statusCode()).isEqualTo(400);
    assertThat(M.readTree(notJson.body()).path("error").path("type").asText()).isEqualTo("invalid_request_error");

    HttpResponse<String> noMessages = h.post("/v1/chat/completions", "{\"model\":\"" + Harness.MODEL + "\"}");
    assertThat(noMessages.statusCode()).isEqualTo(400);
    assertThat(M.readTree(noMessages.body()).path("error").path("message").asText()).contains("messages");

    HttpResponse<String> noMaxTokens = h.post("/v1/messages",
        "{\"model\":\"" + Harness.MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(noMaxTokens.statusCode()).isEqualTo(400);
    JsonNode err = M.readTree(noMaxTokens.body());
    assertThat(err.path("type").asText()).isEqualTo("error");
    assertThat(err.path("error").path("message").asText()).contains("max_tokens");

    String huge = "{\"model\":\"" + Harness.MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\""
        + "x".repeat(33 * 1024 * 1024) + "\"}]}";
    // With Expect: 100-continue the gateway answers 413 from the declared length before any of the body is sent.
    // Without it, the answer can race the upload: over HTTP/2 the gateway then resets the stream and the JDK client
    // reports the reset instead of the 413 (regression: this test failed with "RST_STREAM received"); so does a
    // JDK client over HTTP/2 whose 100-continue wait runs out on a loaded machine, hence HTTP/1.1 here.
    HttpResponse<String> tooLarge = h.http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(h.gateway.uri() + "/v1/chat/completions"))
        .expectContinue(true).version(java.net.http.HttpClient.Version.HTTP_1_1)
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(huge)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(tooLarge.statusCode()).isEqualTo(413);

    HttpResponse<String> wrongMethod = h.get("/v1/chat/completions");
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
  }

  @Test
  void modelsHealthReadyAndMetrics() throws Exception {
    HttpResponse<String> models = h.get("/v1/models");
    assertThat(M.readTree(models.body()).path("data").get(0).path("id").asText()).isEqualTo(Harness.MODEL);
    HttpResponse<String> anthropicModels = h.get("/v1/models", "anthropic-version", "2023-06-01");
    assertThat(M.readTree(anthropicModels.body()).path("data").get(0).path("type").asText()).isEqualTo("model");
    assertThat(h.get("/health").statusCode()).isEqualTo(200);
    assertThat(h.get("/ready").statusCode()).isEqualTo(200);
    openai.chat().completions().create(chat("Metrics please.").build());
    Harness.awaitEveryRequestRecorded(h.gateway);
    String metrics = h.get("/metrics").body();
    assertThat(metrics).contains("# TYPE gen_ai_server_request_duration_seconds histogram")
        .contains("gen_ai_client_token_usage_bucket{").contains("kinference_gateway_requests_total{tenant=\"anonymous\"")
        .contains("kinference_gateway_routing_decisions_total{");
  }
}
