package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code /v1/messages} against the official Anthropic Java SDK. */
class AnthropicSdkTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static SimulatedServer server;
  static AnthropicClient client;

  @BeforeAll
  static void start() {
    server = SimulatedServer.builder(MODEL).defaultOutputTokens(10).start();
    client = AnthropicOkHttpClient.builder().baseUrl(server.baseUri().toString()).apiKey("sim").maxRetries(0)
        .build();
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  private static int promptTokens() {
    return new ApproximateTokenizer().tokenize(InferenceRequest.builder(MODEL).system("Be brief.")
        .user("Why is the sky blue?").build()).length;
  }

  private static MessageCreateParams.Builder params() {
    return MessageCreateParams.builder().model(MODEL).maxTokens(64).system("Be brief.")
        .addUserMessage("Why is the sky blue?");
  }

  @Test
  void message() {
    Message m = client.messages().create(params().build());
    assertThat(m.content()).hasSize(1);
    assertThat(m.content().get(0).asText().text().trim().split(" ")).hasSize(10);
    assertThat(m.stopReason()).contains(StopReason.END_TURN);
    assertThat(m.usage().inputTokens()).isEqualTo(promptTokens());
    assertThat(m.usage().outputTokens()).isEqualTo(10);
  }

  @Test
  void maxTokensMapsToStopReasonMaxTokens() {
    Message m = client.messages().create(params().maxTokens(4).build());
    assertThat(m.stopReason()).contains(StopReason.MAX_TOKENS);
    assertThat(m.usage().outputTokens()).isEqualTo(4);
  }

  @Test
  void streamedEventsComeInTheAnthropicOrder() {
    List<RawMessageStreamEvent> events = new ArrayList<>();
    MessageAccumulator accumulator = MessageAccumulator.create();
    try (StreamResponse<RawMessageStreamEvent> s = client.messages().createStreaming(params().build())) {
      s.stream().forEach(e -> {
        events.add(e);
        accumulator.accumulate(e);
      });
    }
    assertThat(events.get(0).isMessageStart()).isTrue();
    assertThat(events.get(0).asMessageStart().message().usage().inputTokens()).isEqualTo(promptTokens());
    assertThat(events.get(1).isContentBlockStart()).isTrue();
    for (int i = 2; i < events.size() - 3; i++) {
      assertThat(events.get(i).isContentBlockDelta()).isTrue();
    }
    assertThat(events.get(events.size() - 3).isContentBlockStop()).isTrue();
    assertThat(events.get(events.size() - 2).isMessageDelta()).isTrue();
    assertThat(events.get(events.size() - 2).asMessageDelta().delta().stopReason()).contains(StopReason.END_TURN);
    assertThat(events.get(events.size() - 2).asMessageDelta().usage().outputTokens()).isEqualTo(10);
    assertThat(events.get(events.size() - 1).isMessageStop()).isTrue();
    Message m = accumulator.message();
    assertThat(m.content().get(0).asText().text().trim().split(" ")).hasSize(10);
  }

  @Test
  void countTokensMatchesTheServersTokenizer() {
    long n = client.messages().countTokens(MessageCountTokensParams.builder().model(MODEL).system("Be brief.")
        .addUserMessage("Why is the sky blue?").build()).inputTokens();
    assertThat(n).isEqualTo(promptTokens());
  }
}
