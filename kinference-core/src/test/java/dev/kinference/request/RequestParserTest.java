package dev.kinference.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequestParserTest {

  private final RequestParser parser = RequestParser.defaults();

  @Test
  void openAiChatWithStringContentToolCallsAndToolResults() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_CHAT, """
        {"model":"qwen3-8b","stream":true,"max_completion_tokens":256,"cache_salt":"tenant-a",
         "messages":[
           {"role":"developer","content":"Be brief."},
           {"role":"user","content":"What is the weather in Paris?"},
           {"role":"assistant","content":null,"tool_calls":[
             {"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},
           {"role":"tool","tool_call_id":"call_1","content":"18 C, cloudy"}],
         "tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}]}
        """);
    assertThat(r.format()).isEqualTo(ApiFormat.OPENAI_CHAT);
    assertThat(r.model()).isEqualTo("qwen3-8b");
    assertThat(r.stream()).isTrue();
    assertThat(r.maxTokens()).isEqualTo(256);
    assertThat(r.cacheSalt()).isEqualTo("tenant-a");
    assertThat(r.systemPrompt()).isEqualTo("Be brief.");
    assertThat(r.messages()).hasSize(4);
    assertThat(r.messages().get(0).role()).isEqualTo("system");
    assertThat(r.messages().get(2).content())
        .containsExactly(new ContentPart.ToolUse("call_1", "weather", "{\"city\":\"Paris\"}"));
    assertThat(r.messages().get(3).content()).containsExactly(
        new ContentPart.ToolResult("call_1", java.util.List.of(new ContentPart.Text("18 C, cloudy")), false));
    assertThat(r.toolsJson()).hasSize(1);
    assertThat(r.body()).isNotNull();
  }

  @Test
  void openAiContentPartsKeepTextAndImagesInOrder() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_CHAT, """
        {"model":"m","messages":[{"role":"user","content":[
          {"type":"text","text":"Describe"},
          {"type":"image_url","image_url":{"url":"https://example.com/cat.png"}},
          {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
          {"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}
        """);
    var parts = r.messages().get(0).content();
    assertThat(parts.get(0)).isEqualTo(new ContentPart.Text("Describe"));
    assertThat(parts.get(1)).isEqualTo(new ContentPart.Image("https://example.com/cat.png"));
    assertThat(((ContentPart.Image) parts.get(2)).source()).startsWith("sha256:");
    assertThat(parts.get(3)).isInstanceOf(ContentPart.Other.class);
    assertThat(((ContentPart.Other) parts.get(3)).type()).isEqualTo("input_audio");
  }

  @Test
  void openAiCompletionsAcceptsTextTokenIdsAndOneElementArrays() throws Exception {
    assertThat(parser.parse(ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":\"Once upon\"}").prompt())
        .isEqualTo("Once upon");
    assertThat(parser.parse(ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":[1,2,3]}").promptTokenIds())
        .containsExactly(1, 2, 3);
    assertThat(parser.parse(ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":[[4,5]]}").promptTokenIds())
        .containsExactly(4, 5);
    assertThat(parser.parse(ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":[\"x\"],\"max_tokens\":9}")
        .maxTokens()).isEqualTo(9);
  }

  @Test
  void batchedCompletionPromptsAreRefusedNotSilentlyTruncated() {
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":[\"a\",\"b\"]}"))
        .isInstanceOf(MalformedRequestException.class)
        .hasMessageContaining("prompt")
        .hasMessageContaining("batched");
  }

  @Test
  void anthropicMessagesWithSystemBlocksToolUseAndResults() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.ANTHROPIC_MESSAGES, """
        {"model":"claude-like","max_tokens":1024,"stream":false,
         "system":[{"type":"text","text":"You are a careful assistant."}],
         "messages":[
           {"role":"user","content":"Weather in Oslo?"},
           {"role":"assistant","content":[
             {"type":"thinking","thinking":"Need the tool.","signature":"x"},
             {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Oslo"}}]},
           {"role":"user","content":[
             {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"-3 C"}],"is_error":false},
             {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}]}
        """);
    assertThat(r.format()).isEqualTo(ApiFormat.ANTHROPIC_MESSAGES);
    assertThat(r.maxTokens()).isEqualTo(1024);
    assertThat(r.systemPrompt()).isEqualTo("You are a careful assistant.");
    assertThat(r.messages()).extracting(Message::role).containsExactly("system", "user", "assistant", "user");
    assertThat(r.messages().get(2).content()).containsExactly(new ContentPart.Text("Need the tool."),
        new ContentPart.ToolUse("toolu_1", "weather", "{\"city\":\"Oslo\"}"));
    assertThat(r.messages().get(3).content().get(0)).isEqualTo(new ContentPart.ToolResult("toolu_1",
        java.util.List.of(new ContentPart.Text("-3 C")), false));
    assertThat(((ContentPart.Image) r.messages().get(3).content().get(1)).source()).startsWith("sha256:");
  }

  @Test
  void anthropicSystemAsAPlainString() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.ANTHROPIC_MESSAGES,
        "{\"model\":\"m\",\"max_tokens\":5,\"system\":\"Hi\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    assertThat(r.systemPrompt()).isEqualTo("Hi");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      not json                  | OPENAI_CHAT        | {"model":                                                       | body
      top-level array           | OPENAI_CHAT        | []                                                              | body
      missing model             | OPENAI_CHAT        | {"messages":[{"role":"user","content":"x"}]}                    | model
      model not a string        | OPENAI_CHAT        | {"model":7,"messages":[{"role":"user","content":"x"}]}          | model
      missing messages          | OPENAI_CHAT        | {"model":"m"}                                                   | messages
      empty messages            | OPENAI_CHAT        | {"model":"m","messages":[]}                                     | messages
      unknown role              | OPENAI_CHAT        | {"model":"m","messages":[{"role":"robot","content":"x"}]}       | messages[0].role
      part without text         | OPENAI_CHAT        | {"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]} | messages[0].content[0].text
      stream not boolean        | OPENAI_CHAT        | {"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]} | stream
      negative max_tokens       | OPENAI_CHAT        | {"model":"m","max_tokens":-1,"messages":[{"role":"user","content":"x"}]} | max_tokens
      tool without id           | OPENAI_CHAT        | {"model":"m","messages":[{"role":"tool","content":"x"}]}        | messages[0].tool_call_id
      prompt missing            | OPENAI_COMPLETIONS | {"model":"m"}                                                   | prompt
      bad token id              | OPENAI_COMPLETIONS | {"model":"m","prompt":[1,"a"]}                                  | prompt[1]
      anthropic no max_tokens   | ANTHROPIC_MESSAGES | {"model":"m","messages":[{"role":"user","content":"x"}]}        | max_tokens
      anthropic system role     | ANTHROPIC_MESSAGES | {"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]} | messages[0].role
      anthropic bad block       | ANTHROPIC_MESSAGES | {"model":"m","max_tokens":5,"messages":[{"role":"user","content":[7]}]} | messages[0].content[0]
      duplicate key             | OPENAI_CHAT        | {"model":"m","model":"n","messages":[{"role":"user","content":"x"}]} | body
      """)
  void malformedBodiesNameTheField(String description, ApiFormat format, String body, String field) {
    assertThatThrownBy(() -> parser.parse(format, body))
        .isInstanceOfSatisfying(MalformedRequestException.class, e -> {
          assertThat(e.field()).isEqualTo(field);
          assertThat(e.httpStatus()).isEqualTo(400);
          assertThat(e.getMessage()).startsWith(field);
        });
  }

  @Test
  void oversizedBodiesAreRefusedWith413BeforeParsing() {
    RequestParser small = RequestParser.builder().maxBodyBytes(2048).build();
    byte[] body = ("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(4000) + "\"}]}")
        .getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> small.parse(ApiFormat.OPENAI_CHAT, body))
        .isInstanceOfSatisfying(RequestTooLargeException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(413);
          assertThat(e.field()).isEqualTo("body");
          assertThat(e.limit()).isEqualTo(2048);
        });
  }

  @Test
  void tooManyMessagesAreRefusedWith413() {
    RequestParser small = RequestParser.builder().maxMessages(2).build();
    String body = "{\"model\":\"m\",\"messages\":[" + "{\"role\":\"user\",\"content\":\"x\"},".repeat(2)
        + "{\"role\":\"user\",\"content\":\"x\"}]}";
    assertThatThrownBy(() -> small.parse(ApiFormat.OPENAI_CHAT, body))
        .isInstanceOfSatisfying(RequestTooLargeException.class, e -> assertThat(e.field()).isEqualTo("messages"));
  }

  @Test
  void deeplyNestedJsonIsRefusedAsMalformed() {
    String body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"x\":"
        + "[".repeat(500) + "]".repeat(500) + "}";
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_CHAT, body))
        .isInstanceOf(MalformedRequestException.class)
        .hasMessageContaining("body");
  }

  @Test
  void builderValidatesLimits() {
    assertThatThrownBy(() -> RequestParser.builder().maxBodyBytes(10)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RequestParser.builder().maxMessages(0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void callerSuppliedAttributesAreKeptAndCopiesAreIndependent() throws Exception {
    InferenceRequest parsed = parser.parse(ApiFormat.OPENAI_CHAT,
        "{\"model\":\"alias\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"priority\":3}");
    InferenceRequest r = parsed.toBuilder().tenant("team-a").sessionId("conv-9").header("X-Trace", "t1")
        .trafficClass(TrafficClass.BATCH).build();
    assertThat(r.priority()).as("vLLM's priority 3 (lower first) is our -3 (larger first)").isEqualTo(-3);
    assertThat(r.tenant()).isEqualTo("team-a");
    assertThat(r.sessionId()).isEqualTo("conv-9");
    assertThat(r.header("x-trace")).isEqualTo("t1");
    assertThat(r.trafficClass()).isEqualTo(TrafficClass.BATCH);
    InferenceRequest rewritten = r.withModel("qwen3-8b");
    assertThat(rewritten.model()).isEqualTo("qwen3-8b");
    assertThat(r.model()).isEqualTo("alias");
    assertThat(rewritten.tenant()).isEqualTo("team-a");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{\"user\":\"u\"} | u | user",
      "{\"user\":\"u\",\"safety_identifier\":\"s\"} | s | safety_identifier",
      "{\"user\":\"u\",\"metadata\":{\"user_id\":\"m\"}} | m | metadata.user_id",
      "{\"user\":\"u\",\"safety_identifier\":\"s\",\"prompt_cache_key\":\"p\"} | p | prompt_cache_key",
      "{\"user\":\"u\",\"prompt_cache_key\":\"\"} | u | user",
      "{\"user\":7,\"metadata\":{\"user_id\":null}} | | ",
  })
  void sessionHintsFromTheBodyByPrecedence(String hints, String session, String source) throws Exception {
    String json = hints.substring(0, hints.length() - 1) + (hints.length() > 2 ? "," : "")
        + "\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_CHAT, json);
    assertThat(r.sessionId()).isEqualTo(session);
    assertThat(r.sessionSource()).isEqualTo(source);
  }
}
