package dev.kinference.cloud.translate;

import static dev.kinference.cloud.translate.TranslationTest.json;
import static dev.kinference.cloud.translate.TranslationTest.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.RequestParser;
import dev.kinference.routing.Usage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Responses API to an Anthropic-format provider (and Chat Completions), and the answers back. */
class ResponsesTranslationTest {

  private static final ObjectMapper M = new ObjectMapper();

  static final String REQUEST = """
      {'model':'gpt','instructions':'Be brief.','max_output_tokens':64,'stream':true,'store':true,
       'temperature':0.5,'tool_choice':{'type':'function','name':'weather'},
       'input':[
         {'role':'user','content':[{'type':'input_text','text':'Weather in Paris?'},
                                   {'type':'input_image','image_url':'data:image/png;base64,AAAA'}]},
         {'type':'function_call','call_id':'call_1','name':'weather','arguments':'{\\"city\\":\\"Paris\\"}'},
         {'type':'function_call_output','call_id':'call_1','output':'18 C'},
         {'type':'reasoning','id':'rs_1','summary':[]}],
       'tools':[{'type':'function','name':'weather','description':'Looks it up',
                 'parameters':{'type':'object','properties':{'city':{'type':'string'}}}}]}
      """;

  @Test
  void aResponsesRequestBecomesAValidAnthropicRequest() throws Exception {
    ObjectNode out = Translation.request(json(REQUEST), ApiFormat.OPENAI_RESPONSES, ApiFormat.ANTHROPIC_MESSAGES,
        "claude-sonnet", 4096);
    assertThat(out.path("model").asText()).isEqualTo("claude-sonnet");
    assertThat(out.path("max_tokens").asInt()).isEqualTo(64);
    assertThat(out.path("stream").asBoolean()).isTrue();
    assertThat(out.path("system").get(0).path("text").asText()).isEqualTo("Be brief.");
    assertThat(out.path("tools").get(0).path("name").asText()).isEqualTo("weather");
    assertThat(out.path("tools").get(0).path("input_schema").path("properties").has("city")).isTrue();
    assertThat(out.path("tool_choice").path("type").asText()).isEqualTo("tool");
    assertThat(out.path("tool_choice").path("name").asText()).isEqualTo("weather");
    JsonNode messages = out.path("messages");
    assertThat(messages).hasSize(3);
    assertThat(messages.get(0).path("content").get(1).path("source").path("type").asText()).isEqualTo("base64");
    JsonNode use = messages.get(1).path("content").get(0);
    assertThat(use.path("type").asText()).isEqualTo("tool_use");
    assertThat(use.path("id").asText()).isEqualTo("call_1");
    assertThat(use.path("input").path("city").asText()).isEqualTo("Paris");
    JsonNode result = messages.get(2).path("content").get(0);
    assertThat(result.path("type").asText()).isEqualTo("tool_result");
    assertThat(result.path("tool_use_id").asText()).isEqualTo("call_1");
    // and the Anthropic side reads it as a valid messages request
    assertThat(RequestParser.defaults().parse(ApiFormat.ANTHROPIC_MESSAGES, M.writeValueAsBytes(out)).messages())
        .hasSize(4);
  }

  @Test
  void aResponsesRequestBecomesChatCompletions() throws Exception {
    ObjectNode out = Translation.request(json(REQUEST), ApiFormat.OPENAI_RESPONSES, ApiFormat.OPENAI_CHAT, "gpt-x",
        4096);
    assertThat(out.path("max_completion_tokens").asInt()).isEqualTo(64);
    assertThat(out.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(out.path("messages")).extracting(m -> m.path("role").asText())
        .containsExactly("system", "user", "assistant", "tool");
    assertThat(out.path("messages").get(2).path("tool_calls").get(0).path("function").path("name").asText())
        .isEqualTo("weather");
    assertThat(out.path("tool_choice").path("function").path("name").asText()).isEqualTo("weather");
    assertThat(out.path("tools").get(0).path("function").path("parameters").path("type").asText())
        .isEqualTo("object");
    assertThat(out.has("store")).isFalse();
  }

  @Test
  void whatCannotBeTranslatedIsRefusedNamingTheField() {
    assertThatThrownBy(() -> Translation.request(json("{'model':'m','input':'hi','previous_response_id':'resp_1'}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.ANTHROPIC_MESSAGES, "c", 10))
        .isInstanceOf(UnsupportedTranslationException.class)
        .hasMessageStartingWith("previous_response_id: ")
        .extracting(e -> ((UnsupportedTranslationException) e).field()).isEqualTo("previous_response_id");
    assertThatThrownBy(() -> Translation.request(json("{'model':'m','input':'hi','tools':[{'type':'web_search'}]}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.ANTHROPIC_MESSAGES, "c", 10))
        .hasMessageStartingWith("tools[0].type: ");
    assertThatThrownBy(() -> Translation.request(json(
        "{'model':'m','input':'hi','text':{'format':{'type':'json_schema','schema':{}}}}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.ANTHROPIC_MESSAGES, "c", 10))
        .hasMessageStartingWith("text.format: ");
    assertThatThrownBy(() -> Translation.request(json(
        "{'model':'m','input':[{'role':'user','content':[{'type':'input_file','file_id':'f'}]}]}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.ANTHROPIC_MESSAGES, "c", 10))
        .hasMessageStartingWith("input[0].content[0]: ");
    assertThatThrownBy(() -> Translation.request(json("{'model':'m','input':[{'type':'item_reference','id':'x'}]}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.OPENAI_CHAT, "c", 10))
        .hasMessageStartingWith("input[0].type: ");
  }

  @Test
  void anAnthropicAnswerBecomesAResponseWithItemsAndUsage() throws Exception {
    ObjectNode anthropic = json("""
        {'id':'msg_1','type':'message','role':'assistant','model':'claude','stop_reason':'tool_use',
         'content':[{'type':'text','text':'Let me look.'},
                    {'type':'tool_use','id':'toolu_1','name':'weather','input':{'city':'Paris'}}],
         'usage':{'input_tokens':10,'cache_read_input_tokens':30,'output_tokens':7}}
        """);
    ObjectNode r = Translation.response(anthropic, ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_RESPONSES);
    assertThat(r.path("object").asText()).isEqualTo("response");
    assertThat(r.path("id").asText()).startsWith("resp_");
    assertThat(r.path("status").asText()).isEqualTo("completed");
    assertThat(r.path("output")).extracting(i -> i.path("type").asText()).containsExactly("message", "function_call");
    assertThat(r.path("output").get(0).path("content").get(0).path("text").asText()).isEqualTo("Let me look.");
    assertThat(r.path("output").get(1).path("call_id").asText()).isEqualTo("toolu_1");
    assertThat(M.readTree(r.path("output").get(1).path("arguments").asText()).path("city").asText())
        .isEqualTo("Paris");
    assertThat(Usages.ofResponse(ApiFormat.OPENAI_RESPONSES, r)).isEqualTo(new Usage(40, 30, 7));
    assertThat(r.path("usage").path("input_tokens_details").path("cached_tokens").asInt()).isEqualTo(30);
  }

  @Test
  void aLengthStopIsAnIncompleteResponse() throws Exception {
    ObjectNode chat = json("""
        {'id':'chatcmpl-9','object':'chat.completion','created':1,'model':'gpt',
         'choices':[{'index':0,'message':{'role':'assistant','content':'Once'},'finish_reason':'length'}],
         'usage':{'prompt_tokens':5,'completion_tokens':1}}
        """);
    ObjectNode r = Translation.response(chat, ApiFormat.OPENAI_CHAT, ApiFormat.OPENAI_RESPONSES);
    assertThat(r.path("status").asText()).isEqualTo("incomplete");
    assertThat(r.path("incomplete_details").path("reason").asText()).isEqualTo("max_output_tokens");
  }

  @Test
  void anAnthropicStreamBecomesResponsesEventsWithTextFunctionCallAndUsage() throws Exception {
    String upstream = """
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":20,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":0}

        event: content_block_start
        data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":1}"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":1}

        event: message_delta
        data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}

        event: message_stop
        data: {"type":"message_stop"}

        """;
    StreamTranslator t = Translation.stream(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_RESPONSES, false,
        "claude");
    List<SseEvent> events = run(t, upstream);
    assertThat(events).extracting(SseEvent::event).containsExactly("response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done", "response.completed");
    JsonNode completed = M.readTree(events.getLast().data()).path("response");
    assertThat(completed.path("usage").path("output_tokens").asInt()).isEqualTo(9);
    assertThat(completed.path("usage").path("input_tokens").asInt()).isEqualTo(25);
    assertThat(completed.path("output").get(1).path("arguments").asText()).isEqualTo("{\"a\":1}");
    assertThat(completed.path("output").get(1).path("call_id").asText()).isEqualTo("toolu_1");
    // sequence numbers count up from 0
    for (int i = 0; i < events.size(); i++) {
      assertThat(M.readTree(events.get(i).data()).path("sequence_number").asInt()).isEqualTo(i);
    }
    assertThat(t.complete()).isTrue();
    assertThat(t.sawContent()).isTrue();
    assertThat(t.usage()).isEqualTo(new Usage(25, 20, 9));
    assertThat(t.responseId()).as("made up by the gateway: no upstream holds it").isNull();
  }

  @Test
  void passthroughSeesTheIdUsageAndEndAndShowsTheClientsModel() {
    String upstream = """
        event: response.created
        data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"served","status":"in_progress","output":[],"usage":null}}

        event: response.output_text.delta
        data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}

        event: response.completed
        data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","model":"served","status":"completed","output":[],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":8},"output_tokens":3}}}

        """;
    StreamTranslator t = Translation.stream(ApiFormat.OPENAI_RESPONSES, ApiFormat.OPENAI_RESPONSES, false, "alias");
    List<SseEvent> events = run(t, upstream);
    assertThat(events).hasSize(3);
    assertThat(events.get(0).data()).contains("\"model\":\"alias\"");
    assertThat(events.get(1).data()).contains("\"delta\":\"Hi\"");
    assertThat(t.responseId()).isEqualTo("resp_1");
    assertThat(t.complete()).isTrue();
    assertThat(t.outputEvents()).isEqualTo(1);
    assertThat(t.usage()).isEqualTo(new Usage(12, 8, 3));
  }

  @Test
  void aResponsesStreamIsNotAskedForAStreamUsageOption() throws Exception {
    ObjectNode out = Translation.request(json("{'model':'a','input':'hi','stream':true}"),
        ApiFormat.OPENAI_RESPONSES, ApiFormat.OPENAI_RESPONSES, "served", 1);
    assertThat(out.path("model").asText()).isEqualTo("served");
    assertThat(out.has("stream_options")).isFalse();
  }

  @Test
  void midStreamErrorsAreResponsesErrorEvents() throws Exception {
    List<SseEvent> events = new java.util.ArrayList<>();
    SseParser.of(events::add).feed(new String(ApiErrors.streamEvent(ApiFormat.OPENAI_RESPONSES, 502, "gone"),
        java.nio.charset.StandardCharsets.UTF_8));
    assertThat(events.get(0).event()).isEqualTo("error");
    assertThat(M.readTree(events.get(0).data()).path("message").asText()).isEqualTo("gone");
  }
}
