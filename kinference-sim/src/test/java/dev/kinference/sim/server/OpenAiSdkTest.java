package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.completions.CompletionUsage;
import com.openai.models.models.Model;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The real-time server against the official OpenAI Java SDK, streaming and not. */
class OpenAiSdkTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static SimulatedServer server;
  static OpenAIClient client;

  @BeforeAll
  static void start() {
    server = SimulatedServer.builder(MODEL).defaultOutputTokens(12).loraAdapter("sql-lora").start();
    client = OpenAIOkHttpClient.builder().baseUrl(server.baseUri() + "/v1").apiKey("sim").maxRetries(0).build();
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  static int promptTokens(String system, String user) {
    return new ApproximateTokenizer().tokenize(InferenceRequest.builder(MODEL).system(system).user(user).build())
        .length;
  }

  @Test
  void chatCompletion() {
    ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(MODEL).addSystemMessage("You are terse.").addUserMessage("Name a colour.").build());
    assertThat(c.id()).startsWith("chatcmpl-");
    assertThat(c.model()).isEqualTo(MODEL);
    assertThat(c.choices()).hasSize(1);
    assertThat(c.choices().get(0).message().content()).isPresent();
    assertThat(c.choices().get(0).message().content().get().split(" ", -1)).hasSize(13); // leading space, 12 words
    assertThat(c.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
    CompletionUsage usage = c.usage().orElseThrow();
    assertThat(usage.promptTokens()).isEqualTo(promptTokens("You are terse.", "Name a colour."));
    assertThat(usage.completionTokens()).isEqualTo(12);
    assertThat(usage.totalTokens()).isEqualTo(usage.promptTokens() + 12);
  }

  @Test
  void maxTokensCutsTheAnswerWithFinishReasonLength() {
    ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(MODEL).addUserMessage("Tell me a long story.").maxCompletionTokens(5).build());
    assertThat(c.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.LENGTH);
    assertThat(c.usage().orElseThrow().completionTokens()).isEqualTo(5);
  }

  @Test
  void ignoreEosGeneratesExactlyMaxTokens() {
    ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(MODEL).addUserMessage("Count.").maxCompletionTokens(20)
        .putAdditionalBodyProperty("ignore_eos", JsonValue.from(true)).build());
    assertThat(c.usage().orElseThrow().completionTokens()).isEqualTo(20);
    assertThat(c.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.LENGTH);
  }

  @Test
  void streamingChatWithUsageReportsCachedTokensOnTheSecondTurn() {
    String system = "You are a careful assistant for a large company. ".repeat(40);
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
        .model(MODEL).addSystemMessage(system).addUserMessage("What is prefix caching?")
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
    List<ChatCompletionChunk> first = stream(params);
    List<ChatCompletionChunk> second = stream(params);
    for (List<ChatCompletionChunk> chunks : List.of(first, second)) {
      assertThat(chunks.get(0).choices().get(0).delta().role()).isPresent();
      StringBuilder text = new StringBuilder();
      for (ChatCompletionChunk c : chunks) {
        assertThat(c.id()).isEqualTo(chunks.get(0).id());
        c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append));
      }
      assertThat(text.toString().trim().split(" ")).hasSize(12);
      ChatCompletionChunk last = chunks.get(chunks.size() - 1);
      assertThat(last.choices()).isEmpty();
      CompletionUsage usage = last.usage().orElseThrow();
      assertThat(usage.completionTokens()).isEqualTo(12);
      assertThat(usage.promptTokens()).isEqualTo(promptTokens(system, "What is prefix caching?"));
      ChatCompletionChunk finish = chunks.get(chunks.size() - 2);
      assertThat(finish.choices().get(0).finishReason()).contains(ChatCompletionChunk.Choice.FinishReason.STOP);
    }
    long cachedFirst = cached(first);
    long cachedSecond = cached(second);
    int prompt = promptTokens(system, "What is prefix caching?");
    assertThat(cachedFirst).isZero();
    assertThat(cachedSecond).isEqualTo((prompt - 1) / 16 * 16L);
  }

  private static long cached(List<ChatCompletionChunk> chunks) {
    return chunks.get(chunks.size() - 1).usage().orElseThrow().promptTokensDetails().orElseThrow().cachedTokens()
        .orElseThrow();
  }

  private static List<ChatCompletionChunk> stream(ChatCompletionCreateParams params) {
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(params)) {
      s.stream().forEach(chunks::add);
    }
    return chunks;
  }

  @Test
  void completionsStreamingAndNot() {
    CompletionCreateParams params = CompletionCreateParams.builder().model(MODEL)
        .prompt("The capital of France is").maxTokens(6).build();
    Completion c = client.completions().create(params);
    assertThat(c.id()).startsWith("cmpl-");
    assertThat(c.choices().get(0).text().trim().split(" ")).hasSize(6);
    assertThat(c.choices().get(0).finishReason()).isEqualTo(
        com.openai.models.completions.CompletionChoice.FinishReason.LENGTH);
    assertThat(c.usage().orElseThrow().promptTokens())
        .isEqualTo(new ApproximateTokenizer().encode("The capital of France is").length);
    StringBuilder text = new StringBuilder();
    try (StreamResponse<Completion> s = client.completions().createStreaming(params)) {
      s.stream().forEach(chunk -> chunk.choices().forEach(ch -> text.append(ch.text())));
    }
    assertThat(text.toString().trim().split(" ")).hasSize(6);
  }

  @Test
  void modelsListTheBaseModelAndItsLoraAdapters() {
    List<String> ids = client.models().list().data().stream().map(Model::id).toList();
    assertThat(ids).containsExactly(MODEL, "sql-lora");
    ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("sql-lora").addUserMessage("select").maxCompletionTokens(3).build());
    assertThat(c.model()).isEqualTo("sql-lora");
  }

  @Test
  void unknownModelIsNotFoundAndTooLongIsABadRequest() {
    assertThatThrownBy(() -> client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("no-such-model").addUserMessage("hi").build()))
        .isInstanceOf(NotFoundException.class).hasMessageContaining("does not exist");
    assertThatThrownBy(() -> client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(MODEL).addUserMessage("hi").maxCompletionTokens(server.maxModelLen()).build()))
        .isInstanceOf(BadRequestException.class).hasMessageContaining("maximum context length");
  }
}
