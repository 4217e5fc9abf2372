package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ToolChoiceOptions;
import dev.kinference.endpoint.Health;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAI Responses API through the gateway to three simulated vLLM servers that store responses, called with
 * the official OpenAI Java SDK's Responses client: answers and typed event streams with usage charged as the server
 * reported it, tools, and conversations continued with {@code previous_response_id} on the server that holds them.
 */
class ResponsesApiTest {

  static final ObjectMapper M = new ObjectMapper();
  static Harness h;
  static OpenAIClient openai;

  @BeforeAll
  static void start() {
    h = Harness.builder().start();
    openai = h.openai();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static FunctionTool weather() {
    return FunctionTool.builder().name("weather").description("Weather in a city").strict(false)
        .parameters(FunctionTool.Parameters.builder().putAdditionalProperty("type", JsonValue.from("object")).build())
        .build();
  }

  static double tokens(String endpoint, String type) throws InterruptedException {
    return h.metric("kinference_gateway_tokens_total{tenant=\"anonymous\",model=\"" + Harness.MODEL
        + "\",endpoint=\"" + endpoint + "\",type=\"" + type + "\"}");
  }

  /** One turn: the response, and the endpoint and session source the gateway reported. */
  record Turn(Response response, String endpoint, String sessionSource) {}

  static Turn create(ResponseCreateParams params) {
    try (HttpResponseFor<Response> raw = openai.responses().withRawResponse().create(params)) {
      List<String> source = raw.headers().values("x-kinference-session-source");
      return new Turn(raw.parse(), raw.headers().values("x-kinference-endpoint").getFirst(),
          source.isEmpty() ? "" : source.getFirst());
    }
  }

  @Test
  void aResponseIsAnsweredByOneServerAndChargedItsUsage() throws Exception {
    Turn t = create(ResponseCreateParams.builder().model(Harness.MODEL).instructions("You are terse.")
        .input("Name a colour.").build());
    Response r = t.response();
    assertThat(r.model()).isEqualTo(com.openai.models.ResponsesModel.ofString(Harness.MODEL));
    assertThat(r.output().get(0).asMessage().content().get(0).asOutputText().text()).isNotBlank();
    assertThat(r.usage().orElseThrow().outputTokens()).isEqualTo(8);
    assertThat(t.endpoint()).startsWith("vllm-");
    double outputBefore = tokens(t.endpoint(), "output");
    double inputBefore = tokens(t.endpoint(), "input");
    Turn again = create(ResponseCreateParams.builder().model(Harness.MODEL).instructions("You are terse.")
        .input("Name a colour.").store(false).build());
    if (again.endpoint().equals(t.endpoint())) {
      assertThat(tokens(t.endpoint(), "output") - outputBefore).isEqualTo(8);
      assertThat(tokens(t.endpoint(), "input") - inputBefore)
          .isEqualTo((double) again.response().usage().orElseThrow().inputTokens());
    }
    assertThat(h.gateway.responseChains.link(again.response().id())).as("store: false keeps nothing").isNull();
  }

  @Test
  void aStreamArrivesAsTypedEventsAndIsChargedTheCompletedUsage() throws Exception {
    List<ResponseStreamEvent> events = new ArrayList<>();
    String endpoint;
    try (HttpResponseFor<StreamResponse<ResponseStreamEvent>> raw = openai.responses().withRawResponse()
        .createStreaming(ResponseCreateParams.builder().model(Harness.MODEL).input("Count to eight.").build())) {
      endpoint = raw.headers().values("x-kinference-endpoint").getFirst();
      try (StreamResponse<ResponseStreamEvent> s = raw.parse()) {
        s.stream().forEach(events::add);
      }
    }
    assertThat(events.getFirst().isCreated()).isTrue();
    assertThat(events.getLast().isCompleted()).isTrue();
    StringBuilder text = new StringBuilder();
    events.forEach(e -> e.outputTextDelta().ifPresent(d -> text.append(d.delta())));
    assertThat(text.toString().trim().split(" ")).hasSize(8);
    Response done = events.getLast().asCompleted().response();
    assertThat(done.usage().orElseThrow().outputTokens()).isEqualTo(8);
    assertThat(h.gateway.responseChains.link(done.id())).isNotNull()
        .extracting(ResponseChains.Link::endpointId).isEqualTo(endpoint);
  }

  /**
   * A conversation of three turns (a forced tool call, its output, a follow-up), each naming the previous response:
   * every turn lands on the server holding the conversation, with the conversation's first response as session key.
   * Eight conversations over three servers: by chance, all would stay put with probability (1/9)^8.
   */
  @Test
  void turnsContinuingAResponseLandOnTheServerThatHoldsIt() {
    Turn alone = create(ResponseCreateParams.builder().model(Harness.MODEL).input("And tomorrow?").build());
    for (int c = 0; c < 8; c++) {
      Turn first = create(ResponseCreateParams.builder().model(Harness.MODEL).input("Weather in city " + c + "?")
          .addTool(weather()).toolChoice(ToolChoiceOptions.REQUIRED).build());
      ResponseFunctionToolCall call = first.response().output().get(0).asFunctionCall();
      assertThat(call.name()).isEqualTo("weather");
      Turn second = create(ResponseCreateParams.builder().model(Harness.MODEL)
          .previousResponseId(first.response().id()).addTool(weather())
          .inputOfResponse(List.of(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput
              .builder().callId(call.callId()).output("18 C").build())))
          .build());
      Turn third = create(ResponseCreateParams.builder().model(Harness.MODEL)
          .previousResponseId(second.response().id()).input("And tomorrow?").build());
      // a second branch from the same response goes there too
      Turn branch = create(ResponseCreateParams.builder().model(Harness.MODEL)
          .previousResponseId(second.response().id()).input("And yesterday?").build());
      assertThat(List.of(second.endpoint(), third.endpoint(), branch.endpoint())).containsOnly(first.endpoint());
      assertThat(List.of(second.sessionSource(), third.sessionSource())).containsOnly("previous_response_id");
      assertThat(h.gateway.responseChains.link(third.response().id()).root()).isEqualTo(first.response().id());
      // the server saw the stored conversation: the follow-up's prompt is longer than its own input
      assertThat(third.response().usage().orElseThrow().inputTokens())
          .isGreaterThan(alone.response().usage().orElseThrow().inputTokens() + 5);
    }
  }

  @Test
  void aStreamedTurnContinuesOnTheSameServer() {
    Turn first = create(ResponseCreateParams.builder().model(Harness.MODEL).input("Hello.").build());
    String endpoint;
    Response done = null;
    try (HttpResponseFor<StreamResponse<ResponseStreamEvent>> raw = openai.responses().withRawResponse()
        .createStreaming(ResponseCreateParams.builder().model(Harness.MODEL)
            .previousResponseId(first.response().id()).input("Go on.").build())) {
      endpoint = raw.headers().values("x-kinference-endpoint").getFirst();
      try (StreamResponse<ResponseStreamEvent> s = raw.parse()) {
        for (ResponseStreamEvent e : (Iterable<ResponseStreamEvent>) s.stream()::iterator) {
          if (e.isCompleted()) {
            done = e.asCompleted().response();
          }
        }
      }
    }
    assertThat(endpoint).isEqualTo(first.endpoint());
    assertThat(done).isNotNull();
    assertThat(h.gateway.responseChains.link(done.id()).root()).isEqualTo(first.response().id());
  }

  @Test
  void aSessionHeaderOutranksPreviousResponseIdAsSessionKeyButNotThePlacement() throws Exception {
    Turn first = create(ResponseCreateParams.builder().model(Harness.MODEL).input("Hello.").build());
    HttpResponse<String> next = h.post("/v1/responses", "{\"model\":\"" + Harness.MODEL
        + "\",\"input\":\"Go on.\",\"previous_response_id\":\"" + first.response().id() + "\"}",
        "x-kinference-session", "my-conversation");
    assertThat(next.statusCode()).isEqualTo(200);
    assertThat(next.headers().firstValue("x-kinference-session-source")).contains("x-kinference-session");
    assertThat(next.headers().firstValue("x-kinference-endpoint")).contains(first.endpoint());
  }

  /** Draining is for good, so this test has its own two servers. */
  @Test
  void whileTheServerHoldingTheResponseCannotTakeRequestsTheAnswerIs503NotAnotherServer() throws Exception {
    try (Harness own = Harness.builder().servers(2).start()) {
      HttpResponse<String> first = own.post("/v1/responses", "{\"model\":\"" + Harness.MODEL
          + "\",\"input\":\"Hello.\"}");
      String id = M.readTree(first.body()).path("id").asText();
      String holder = first.headers().firstValue("x-kinference-endpoint").orElseThrow();
      own.router.fleet().get(holder).updateHealth(Health.DRAINING, "test: draining");
      HttpResponse<String> r = own.post("/v1/responses", "{\"model\":\"" + Harness.MODEL
          + "\",\"input\":\"Go on.\",\"previous_response_id\":\"" + id + "\"}");
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("retry-after")).isPresent();
      assertThat(M.readTree(r.body()).path("error").path("message").asText())
          .contains("previous_response_id", id, holder);
      // a new conversation still goes to the other server
      assertThat(own.post("/v1/responses", "{\"model\":\"" + Harness.MODEL + "\",\"input\":\"Hi.\"}")
          .statusCode()).isEqualTo(200);
    }
  }

  @Test
  void badRequestsGetOpenAiErrorsNamingTheField() throws Exception {
    HttpResponse<String> r = h.post("/v1/responses", "{\"model\":\"" + Harness.MODEL + "\"}");
    assertThat(r.statusCode()).isEqualTo(400);
    JsonNode error = M.readTree(r.body()).path("error");
    assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.path("param").asText()).isEqualTo("input");
    assertThat(error.path("message").asText()).contains("input");
    HttpResponse<String> get = h.get("/v1/responses");
    assertThat(get.statusCode()).isEqualTo(405);
  }

  @Test
  void aContinuationOfAResponseNoServerHoldsIsANotFoundAfterEveryServerSaidSo() throws Exception {
    HttpResponse<String> r = h.post("/v1/responses", "{\"model\":\"" + Harness.MODEL
        + "\",\"input\":\"and then?\",\"previous_response_id\":\"resp_never_stored\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
    assertThat(M.readTree(r.body()).path("error").path("message").asText()).contains("resp_never_stored");
  }
}
