package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ResponseUsage;
import com.openai.models.responses.ToolChoiceOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The simulator's {@code /v1/responses} against the official OpenAI Java SDK's Responses client. */
class ResponsesSdkTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static SimulatedServer server;
  static SimulatedServer other;
  static OpenAIClient client;
  static OpenAIClient otherClient;

  @BeforeAll
  static void start() {
    server = SimulatedServer.builder(MODEL).defaultOutputTokens(12).start();
    other = SimulatedServer.builder(MODEL).defaultOutputTokens(12).start();
    client = OpenAIOkHttpClient.builder().baseUrl(server.baseUri() + "/v1").apiKey("sim").maxRetries(0).build();
    otherClient = OpenAIOkHttpClient.builder().baseUrl(other.baseUri() + "/v1").apiKey("sim").maxRetries(0).build();
  }

  @AfterAll
  static void stop() {
    client.close();
    otherClient.close();
    server.close();
    other.close();
  }

  static FunctionTool weather() {
    return FunctionTool.builder().name("weather").strict(false)
        .parameters(FunctionTool.Parameters.builder().putAdditionalProperty("type", JsonValue.from("object")).build())
        .build();
  }

  /** The event's type, for the kinds a text answer has. */
  static String type(ResponseStreamEvent e) {
    return e.isCreated() ? "response.created" : e.isInProgress() ? "response.in_progress"
        : e.isOutputItemAdded() ? "response.output_item.added"
        : e.isContentPartAdded() ? "response.content_part.added"
        : e.isOutputTextDelta() ? "response.output_text.delta"
        : e.isOutputTextDone() ? "response.output_text.done"
        : e.isContentPartDone() ? "response.content_part.done"
        : e.isOutputItemDone() ? "response.output_item.done"
        : e.isFunctionCallArgumentsDelta() ? "response.function_call_arguments.delta"
        : e.isFunctionCallArgumentsDone() ? "response.function_call_arguments.done"
        : e.isCompleted() ? "response.completed" : e.isError() ? "error" : "other";
  }

  @Test
  void aResponseWithTextAndUsage() {
    Response r = client.responses().create(ResponseCreateParams.builder().model(MODEL)
        .instructions("You are terse.").input("Name a colour.").build());
    assertThat(r.id()).startsWith("resp_");
    assertThat(r.output()).hasSize(1);
    String text = r.output().get(0).asMessage().content().get(0).asOutputText().text();
    assertThat(text.split(" ", -1)).hasSize(13); // leading space, 12 words
    ResponseUsage usage = r.usage().orElseThrow();
    assertThat(usage.outputTokens()).isEqualTo(12);
    assertThat(usage.inputTokens()).isPositive();
    assertThat(usage.totalTokens()).isEqualTo(usage.inputTokens() + 12);
  }

  @Test
  void maxOutputTokensMakesItIncomplete() {
    Response r = client.responses().create(ResponseCreateParams.builder().model(MODEL).input("Tell a story.")
        .maxOutputTokens(5).build());
    assertThat(r.status().orElseThrow().asString()).isEqualTo("incomplete");
    assertThat(r.usage().orElseThrow().outputTokens()).isEqualTo(5);
  }

  @Test
  void aStreamOfTypedEventsEndsWithTheCompletedResponse() {
    List<String> types = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    Response completed = null;
    try (StreamResponse<ResponseStreamEvent> s = client.responses().createStreaming(
        ResponseCreateParams.builder().model(MODEL).input("Name a colour.").build())) {
      for (ResponseStreamEvent e : (Iterable<ResponseStreamEvent>) s.stream()::iterator) {
        types.add(type(e));
        e.outputTextDelta().ifPresent(d -> text.append(d.delta()));
        if (e.isCompleted()) {
          completed = e.asCompleted().response();
        }
      }
    }
    assertThat(types).startsWith("response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta")
        .endsWith("response.output_text.done", "response.content_part.done", "response.output_item.done",
            "response.completed");
    assertThat(completed).isNotNull();
    assertThat(completed.usage().orElseThrow().outputTokens()).isEqualTo(12);
    assertThat(completed.output().get(0).asMessage().content().get(0).asOutputText().text())
        .isEqualTo(text.toString());
  }

  @Test
  void aRequiredToolGivesAFunctionCallStreamedAsArguments() {
    StringBuilder args = new StringBuilder();
    ResponseFunctionToolCall call = null;
    try (StreamResponse<ResponseStreamEvent> s = client.responses().createStreaming(
        ResponseCreateParams.builder().model(MODEL).input("Weather in Paris?").addTool(weather())
            .toolChoice(ToolChoiceOptions.REQUIRED).build())) {
      for (ResponseStreamEvent e : (Iterable<ResponseStreamEvent>) s.stream()::iterator) {
        e.functionCallArgumentsDelta().ifPresent(d -> args.append(d.delta()));
        if (e.isOutputItemDone()) {
          call = e.asOutputItemDone().item().asFunctionCall();
        }
      }
    }
    assertThat(call).isNotNull();
    assertThat(call.name()).isEqualTo("weather");
    assertThat(call.arguments()).isEqualTo(args.toString()).startsWith("{\"input\":\"").endsWith("\"}");
  }

  @Test
  void previousResponseIdWorksOnlyWhereTheResponseIsStored() {
    Response first = client.responses().create(ResponseCreateParams.builder().model(MODEL)
        .input("Weather in Paris?").addTool(weather()).toolChoice(ToolChoiceOptions.REQUIRED).build());
    ResponseFunctionToolCall call = first.output().get(0).asFunctionCall();
    assertThat(server.responses().holds(first.id())).isTrue();
    ResponseCreateParams next = ResponseCreateParams.builder().model(MODEL).previousResponseId(first.id())
        .inputOfResponse(List.of(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput
            .builder().callId(call.callId()).output("18 C").build())))
        .build();
    Response second = client.responses().create(next);
    // the stored conversation is part of the prompt
    Response alone = client.responses().create(ResponseCreateParams.builder().model(MODEL).input("18 C").build());
    assertThat(second.usage().orElseThrow().inputTokens())
        .isGreaterThan(alone.usage().orElseThrow().inputTokens() + 5);
    assertThatThrownBy(() -> otherClient.responses().create(next)).isInstanceOf(NotFoundException.class)
        .hasMessageContaining(first.id());
  }

  @Test
  void storeFalseKeepsNothing() {
    Response r = client.responses().create(ResponseCreateParams.builder().model(MODEL).input("Hi.").store(false)
        .build());
    assertThat(server.responses().holds(r.id())).isFalse();
  }
}
