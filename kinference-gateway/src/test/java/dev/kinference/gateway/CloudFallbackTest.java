package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.JsonValue;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolUseBlock;
import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import dev.kinference.cloud.CloudProvider;
import dev.kinference.cloud.ExternalProviders;
import dev.kinference.cloud.Prices;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.server.SimulatedServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A simulated cloud provider behind the gateway: an OpenAI client served by an Anthropic-format provider and an
 * Anthropic client served by an OpenAI-format provider (text, tool calls, streams, usage), the key taken from the
 * environment, and the provider as fallback when the local servers fail before the first byte.
 */
class CloudFallbackTest {

  static final String CLAUDE = CloudProvider.endpointId("anthropic-cloud", "claude-x");
  static final String GPT = CloudProvider.endpointId("openai-cloud", "gpt-x");
  static final String NO_KEY = CloudProvider.endpointId("keyless-cloud", "free-x");
  static FakeCloud cloud;
  static Harness h;
  static OpenAIClient openai;
  static AnthropicClient anthropic;

  /** Public names to providers; the local model falls back to Claude; "keyless" has no key in the environment. */
  static final class TestPolicy implements PolicyEngine {
    @Override
    public String name() {
      return "test";
    }

    @Override
    public PolicyVerdict evaluate(InferenceRequest request, Fleet.Snapshot fleet) {
      return switch (request.model()) {
        case "claude-chat" -> only(request, CLAUDE);
        case "gpt-chat" -> only(request, GPT);
        case "keyless" -> only(request, NO_KEY);
        default -> new PolicyVerdict.Proceed(request, null, List.of(CLAUDE), false, List.of("test/fallback"));
      };
    }

    private static PolicyVerdict only(InferenceRequest request, String id) {
      return new PolicyVerdict.Proceed(request, (EndpointState e) -> e.id().equals(id), List.of(), false,
          List.of("test/" + id));
    }
  }

  static ExternalProviders providers(FakeCloud c) {
    return ExternalProviders.builder()
        .provider(CloudProvider.builder("anthropic-cloud").api("anthropic").baseUri(c.baseUrl())
            .apiKeyEnv("TEST_ANTHROPIC_KEY").model("claude-x", new Prices(3, 0.3, 15)).build())
        .provider(CloudProvider.builder("openai-cloud").api("openai").baseUri(c.baseUrl() + "/v1")
            .apiKeyEnv("TEST_OPENAI_KEY").model("gpt-x", Prices.of(2.5, 10)).build())
        .provider(CloudProvider.builder("keyless-cloud").api("openai").baseUri(c.baseUrl() + "/v1")
            .apiKeyEnv("TEST_UNSET_KEY").model("free-x", Prices.FREE).build())
        .environment(Map.of("TEST_ANTHROPIC_KEY", FakeCloud.KEY, "TEST_OPENAI_KEY", FakeCloud.KEY)::get)
        .build();
  }

  @BeforeAll
  static void start() throws Exception {
    cloud = new FakeCloud();
    h = Harness.builder().servers(2).providers(providers(cloud)).router(r -> r.policyEngine(new TestPolicy()))
        .start();
    openai = h.openai();
    anthropic = h.anthropic();
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
    cloud.close();
  }

  static FunctionDefinition weatherFunction() {
    return FunctionDefinition.builder().name("get_weather").description("Weather in a city")
        .parameters(FunctionParameters.builder().putAdditionalProperty("type", com.openai.core.JsonValue.from("object"))
            .putAdditionalProperty("properties", com.openai.core.JsonValue.from(
                Map.of("city", Map.of("type", "string")))).build())
        .build();
  }

  @Test
  void openAiClientIsServedByAnAnthropicProviderWithTextToolCallsAndUsage() throws Exception {
    ChatCompletion text = openai.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("claude-chat").addSystemMessage("Be brief.").addUserMessage("Say hello.").build());
    assertThat(text.choices().get(0).message().content()).contains(FakeCloud.TEXT);
    assertThat(text.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
    assertThat(text.usage().orElseThrow().completionTokens()).isEqualTo(4);
    FakeCloud.Seen sent = cloud.seen.get(cloud.seen.size() - 1);
    assertThat(sent.path()).isEqualTo("/v1/messages");
    assertThat(sent.auth()).isEqualTo(FakeCloud.KEY);
    assertThat(sent.body().path("model").asText()).isEqualTo("claude-x");
    assertThat(sent.body().path("system").get(0).path("text").asText()).isEqualTo("Be brief.");
    assertThat(sent.body().path("max_tokens").asInt()).isEqualTo(4096);

    ChatCompletion call = openai.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("claude-chat").addUserMessage("Weather in Paris?").maxCompletionTokens(100)
        .addTool(ChatCompletionFunctionTool.builder().function(weatherFunction()).build()).build());
    assertThat(call.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
    ChatCompletionMessageFunctionToolCall fn = call.choices().get(0).message().toolCalls().orElseThrow().get(0)
        .asFunction();
    assertThat(fn.function().name()).isEqualTo("get_weather");
    assertThat(fn.function().arguments()).isEqualTo("{\"city\":\"Paris\"}");
    JsonValueAssert.hasInputSchema(cloud.seen.get(cloud.seen.size() - 1).body());

    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(
        ChatCompletionCreateParams.builder().model("claude-chat").addUserMessage("Say hello.")
            .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
      s.stream().forEach(chunks::add);
    }
    StringBuilder streamed = new StringBuilder();
    chunks.forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(streamed::append)));
    assertThat(streamed.toString()).isEqualTo(FakeCloud.TEXT);
    assertThat(chunks.get(chunks.size() - 1).usage().orElseThrow().completionTokens()).isEqualTo(4);
    assertThat(h.metric("kinference_gateway_fallbacks_total{tenant=\"anonymous\",model=\"claude-chat\",endpoint=\""
        + CLAUDE + "\"}")).isGreaterThanOrEqualTo(3);
    assertThat(h.metric("kinference_gateway_cost_total{tenant=\"anonymous\",model=\"claude-chat\",endpoint=\""
        + CLAUDE + "\"}")).isPositive();
  }

  @Test
  void anthropicClientIsServedByAnOpenAiProviderWithTextToolUseAndUsage() {
    Message m = anthropic.messages().create(MessageCreateParams.builder().model("gpt-chat").maxTokens(50)
        .system("Be brief.").addUserMessage("Say hello.").build());
    assertThat(m.content().get(0).asText().text()).isEqualTo(FakeCloud.TEXT);
    assertThat(m.stopReason()).contains(StopReason.END_TURN);
    assertThat(m.usage().outputTokens()).isEqualTo(4);
    FakeCloud.Seen sent = cloud.seen.get(cloud.seen.size() - 1);
    assertThat(sent.path()).isEqualTo("/v1/chat/completions");
    assertThat(sent.auth()).isEqualTo("Bearer " + FakeCloud.KEY);
    assertThat(sent.body().path("model").asText()).isEqualTo("gpt-x");
    assertThat(sent.body().path("messages").get(0).path("role").asText()).isEqualTo("system");

    MessageAccumulator acc = MessageAccumulator.create();
    try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> s = anthropic.messages().createStreaming(
        MessageCreateParams.builder().model("gpt-chat").maxTokens(50).addUserMessage("Weather in Paris?")
            .addTool(Tool.builder().name("get_weather").description("Weather in a city")
                .inputSchema(Tool.InputSchema.builder().properties(Tool.InputSchema.Properties.builder()
                    .putAdditionalProperty("city", JsonValue.from(Map.of("type", "string"))).build()).build())
                .build()).build())) {
      s.stream().forEach(acc::accumulate);
    }
    Message streamed = acc.message();
    assertThat(streamed.stopReason()).contains(StopReason.TOOL_USE);
    ToolUseBlock use = streamed.content().get(0).asToolUse();
    assertThat(use.name()).isEqualTo("get_weather");
    assertThat(use._input().toString()).contains("Paris");
    assertThat(streamed.usage().outputTokens()).isEqualTo(4);
    FakeCloud.Seen streamedRequest = cloud.seen.get(cloud.seen.size() - 1);
    assertThat(streamedRequest.body().path("tools").get(0).path("function").path("name").asText())
        .isEqualTo("get_weather");
    assertThat(streamedRequest.body().path("stream_options").path("include_usage").asBoolean()).isTrue();
  }

  @Test
  void aProviderWhoseKeyIsMissingIsSkippedWithAClearError() {
    int before = cloud.seen.size();
    assertThatThrownBy(() -> openai.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("keyless").addUserMessage("hi").build()))
        .hasMessageContaining("TEST_UNSET_KEY");
    assertThat(cloud.seen.size()).isEqualTo(before);
  }

  @Test
  void aProviderStreamCutAfterTheFirstByteEndsWithAnErrorEventOfTheClientsApi() throws Exception {
    cloud.cutAfter.set(4);
    try {
      List<ChatCompletionChunk> got = new ArrayList<>();
      assertThatThrownBy(() -> {
        try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(
            ChatCompletionCreateParams.builder().model("claude-chat").addUserMessage("Say hello.").build())) {
          s.stream().forEach(got::add);
        }
      }).hasMessageContaining(CLAUDE);
      assertThat(got).isNotEmpty();

      MessageAccumulator acc = MessageAccumulator.create();
      assertThatThrownBy(() -> {
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> s = anthropic.messages()
            .createStreaming(MessageCreateParams.builder().model("gpt-chat").maxTokens(20).addUserMessage("hi")
                .build())) {
          s.stream().forEach(acc::accumulate);
        }
      }).hasMessageContaining(GPT);
    } finally {
      cloud.cutAfter.set(0);
    }
    assertThat(h.metric("kinference_gateway_errors_total{tenant=\"anonymous\",model=\"claude-chat\",endpoint=\""
        + CLAUDE + "\",error_type=\"mid_stream\"}")).isEqualTo(1);
  }

  @Test
  void localFailureBeforeTheFirstByteFallsBackToTheProvider() throws Exception {
    try (Harness local = Harness.builder().servers(1).providers(providers(cloud))
        .router(r -> r.policyEngine(new TestPolicy())).start()) {
      SimulatedServer sim = local.sims.server(0);
      sim.kill(SimulatedServer.KillMode.ENGINE_DEAD);
      try (HttpResponseFor<ChatCompletion> raw = local.openai().chat().completions().withRawResponse().create(
          ChatCompletionCreateParams.builder().model(Harness.MODEL).addUserMessage("Say hello.").build())) {
        assertThat(raw.parse().choices().get(0).message().content()).contains(FakeCloud.TEXT);
        assertThat(raw.headers().values("x-kinference-endpoint")).containsExactly(CLAUDE);
      }
      assertThat(local.metric("kinference_gateway_retries_total{endpoint=\"" + sim.name()
          + "\",cause=\"status_503\"}")).isEqualTo(1);
      assertThat(local.metric("kinference_gateway_routing_decisions_total{endpoint=\"" + CLAUDE
          + "\",reason=\"fallback\"}")).isEqualTo(1);

      // Streams too: the client sees only the provider's answer, never the failed attempt.
      StringBuilder text = new StringBuilder();
      try (StreamResponse<ChatCompletionChunk> s = local.openai().chat().completions().createStreaming(
          ChatCompletionCreateParams.builder().model(Harness.MODEL).addUserMessage("Say hello.").build())) {
        s.stream().forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
      }
      assertThat(text.toString()).isEqualTo(FakeCloud.TEXT);
    }
  }

  /** Checks on the request the provider received. */
  static final class JsonValueAssert {
    static void hasInputSchema(com.fasterxml.jackson.databind.JsonNode anthropicBody) {
      assertThat(anthropicBody.path("tools").get(0).path("input_schema").path("properties").has("city")).isTrue();
      assertThat(anthropicBody.path("max_tokens").asInt()).isEqualTo(100);
    }
  }

}
