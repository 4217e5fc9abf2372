package dev.kinference.vllm.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.ApiFormat;
import dev.kinference.request.RequestParser;
import org.junit.jupiter.api.Test;

class ChatRequestsTest {

  @Test
  void responsesApiToolsAndItemsBecomeTheChatTemplatesInput() throws Exception {
    ChatRequests c = ChatRequests.of(RequestParser.defaults().parse(ApiFormat.OPENAI_RESPONSES, """
        {"model":"m","instructions":"Be brief.",
         "input":[{"role":"user","content":"Weather?"},
                  {"type":"function_call","call_id":"c1","name":"weather","arguments":"{}"},
                  {"type":"function_call_output","call_id":"c1","output":"18 C"}],
         "tools":[{"type":"function","name":"weather","description":"d","parameters":{"type":"object"}}]}
        """));
    assertThat(c.tools()).isNotNull();
    assertThat(c.tools().get(0).path("function").path("name").asText()).isEqualTo("weather");
    assertThat(c.tools().get(0).path("function").path("parameters").path("type").asText()).isEqualTo("object");
    assertThat(c.messages()).extracting(m -> m.path("role").asText())
        .containsExactly("system", "user", "assistant", "tool");
  }
}
