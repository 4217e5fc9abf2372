package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseStreamEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Responses API client served by an Anthropic-format provider and by a Chat Completions provider through the
 * gateway: the request translated, the answer and its typed event stream translated back with usage, and what cannot
 * be translated refused with a 400 naming the field.
 */
class ResponsesCloudFallbackTest {

  static FakeCloud cloud;
  static Harness h;
  static OpenAIClient openai;

  @BeforeAll
  static void start() throws Exception {
    cloud = new FakeCloud();
    h = Harness.builder().servers(1).providers(CloudFallbackTest.providers(cloud))
        .router(r -> r.policyEngine(new CloudFallbackTest.TestPolicy())).start();
    openai = h.openai();
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
    cloud.close();
  }

  static FunctionTool weather() {
    return FunctionTool.builder().name("get_weather").strict(false)
        .parameters(FunctionTool.Parameters.builder().putAdditionalProperty("type", JsonValue.from("object")).build())
        .build();
  }

  @Test
  void anAnthropicProviderAnswersAResponsesClient() throws Exception {
    Response text = openai.responses().create(ResponseCreateParams.builder().model("claude-chat")
        .instructions("Be brief.").input("Say hello.").maxOutputTokens(100).build());
    assertThat(text.output().get(0).asMessage().content().get(0).asOutputText().text()).isEqualTo(FakeCloud.TEXT);
    assertThat(text.usage().orElseThrow().outputTokens()).isEqualTo(4);
    FakeCloud.Seen sent = cloud.seen.getLast();
    assertThat(sent.path()).isEqualTo("/v1/messages");
    assertThat(sent.body().path("model").asText()).isEqualTo("claude-x");
    assertThat(sent.body().path("system").get(0).path("text").asText()).isEqualTo("Be brief.");
    assertThat(sent.body().path("max_tokens").asInt()).isEqualTo(100);

    Response call = openai.responses().create(ResponseCreateParams.builder().model("claude-chat")
        .input("Weather in Paris?").addTool(weather()).build());
    ResponseFunctionToolCall fn = call.output().get(0).asFunctionCall();
    assertThat(fn.name()).isEqualTo("get_weather");
    assertThat(fn.callId()).isEqualTo("toolu_fake");
    assertThat(fn.arguments()).isEqualTo("{\"city\":\"Paris\"}");
    JsonNode tool = cloud.seen.getLast().body().path("tools").get(0);
    assertThat(tool.path("name").asText()).isEqualTo("get_weather");
    assertThat(tool.has("input_schema")).isTrue();

    List<ResponseStreamEvent> events = new ArrayList<>();
    try (StreamResponse<ResponseStreamEvent> s = openai.responses().createStreaming(ResponseCreateParams.builder()
        .model("claude-chat").input("Say hello.").build())) {
      s.stream().forEach(events::add);
    }
    StringBuilder streamed = new StringBuilder();
    events.forEach(e -> e.outputTextDelta().ifPresent(d -> streamed.append(d.delta())));
    assertThat(streamed.toString()).isEqualTo(FakeCloud.TEXT);
    assertThat(events.getLast().asCompleted().response().usage().orElseThrow().outputTokens()).isEqualTo(4);
    assertThat(h.metric("kinference_gateway_fallbacks_total{tenant=\"anonymous\",model=\"claude-chat\",endpoint=\""
        + CloudFallbackTest.CLAUDE + "\"}")).isGreaterThanOrEqualTo(3);
    assertThat(h.metric("kinference_gateway_tokens_total{tenant=\"anonymous\",model=\"claude-chat\",endpoint=\""
        + CloudFallbackTest.CLAUDE + "\",type=\"output\"}")).isGreaterThanOrEqualTo(12);
  }

  @Test
  void aChatCompletionsProviderAnswersAResponsesClient() {
    Response text = openai.responses().create(ResponseCreateParams.builder().model("gpt-chat")
        .input("Say hello.").build());
    assertThat(text.output().get(0).asMessage().content().get(0).asOutputText().text()).isEqualTo(FakeCloud.TEXT);
    FakeCloud.Seen sent = cloud.seen.getLast();
    assertThat(sent.path()).isEqualTo("/v1/chat/completions");
    assertThat(sent.body().path("messages").get(0).path("content").asText()).isEqualTo("Say hello.");
  }

  @Test
  void whatAProviderCannotExpressIsA400NamingTheField() {
    int before = cloud.seen.size();
    assertThatThrownBy(() -> openai.responses().create(ResponseCreateParams.builder().model("claude-chat")
        .input("Go on.").previousResponseId("resp_123").build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("previous_response_id");
    assertThat(cloud.seen).hasSize(before);
  }
}
