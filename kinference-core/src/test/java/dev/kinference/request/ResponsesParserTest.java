package dev.kinference.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResponsesParserTest {

  private final RequestParser parser = RequestParser.defaults();

  @Test
  void instructionsMessagesFunctionCallsOutputsAndImages() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_RESPONSES, """
        {"model":"qwen3-8b","stream":true,"max_output_tokens":128,"instructions":"Be brief.",
         "previous_response_id":"resp_1","store":true,
         "input":[
           {"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"},
                                     {"type":"input_image","image_url":"https://x/p.png"}]},
           {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
           {"type":"function_call","call_id":"call_1","name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"},
           {"type":"function_call_output","call_id":"call_1","output":"18 C"},
           {"type":"reasoning","id":"rs_1","summary":[]}],
         "tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}]}
        """);
    assertThat(r.format()).isEqualTo(ApiFormat.OPENAI_RESPONSES);
    assertThat(r.stream()).isTrue();
    assertThat(r.maxTokens()).isEqualTo(128);
    assertThat(r.systemPrompt()).isEqualTo("Be brief.");
    assertThat(r.messages()).extracting(Message::role).containsExactly("system", "user", "assistant", "tool",
        "assistant");
    assertThat(r.messages().get(1).content()).containsExactly(new ContentPart.Text("Weather in Paris?"),
        new ContentPart.Image("https://x/p.png"));
    // the assistant's text and its call are one turn
    assertThat(r.messages().get(2).content()).containsExactly(new ContentPart.Text("Checking."),
        new ContentPart.ToolUse("call_1", "weather", "{\"city\":\"Paris\"}"));
    assertThat(r.messages().get(3).content()).containsExactly(
        new ContentPart.ToolResult("call_1", List.of(new ContentPart.Text("18 C")), false));
    assertThat(r.toolsJson()).hasSize(1);
    assertThat(r.sessionId()).isEqualTo("resp_1");
    assertThat(r.sessionSource()).isEqualTo("previous_response_id");
  }

  @Test
  void aStringInputIsOneUserMessage() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_RESPONSES, "{\"model\":\"m\",\"input\":\"hi\"}");
    assertThat(r.messages()).containsExactly(Message.text("user", "hi"));
    assertThat(r.maxTokens()).isEqualTo(-1);
    assertThat(r.sessionId()).isNull();
  }

  @Test
  void previousResponseIdOutranksPromptCacheKey() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.OPENAI_RESPONSES,
        "{\"model\":\"m\",\"input\":\"hi\",\"prompt_cache_key\":\"k\",\"previous_response_id\":\"resp_9\"}");
    assertThat(r.sessionSource()).isEqualTo("previous_response_id");
  }

  @Test
  void badInputNamesTheField() {
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES, "{\"model\":\"m\"}"))
        .isInstanceOf(MalformedRequestException.class).hasMessageContaining("input");
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES, "{\"model\":\"m\",\"input\":[]}"))
        .hasMessageContaining("input: must contain at least one item");
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES,
        "{\"model\":\"m\",\"input\":[{\"type\":\"function_call_output\",\"output\":\"x\"}]}"))
        .hasMessageContaining("input[0].call_id");
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES,
        "{\"model\":\"m\",\"input\":\"x\",\"previous_response_id\":7}"))
        .hasMessageContaining("previous_response_id");
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES,
        "{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":0}"))
        .hasMessageContaining("max_output_tokens");
    assertThatThrownBy(() -> parser.parse(ApiFormat.OPENAI_RESPONSES,
        "{\"model\":\"m\",\"input\":[{\"role\":\"robot\",\"content\":\"x\"}]}"))
        .hasMessageContaining("input[0].role");
  }
}
