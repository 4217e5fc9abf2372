package dev.kinference.cloud.translate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.RequestParser;
import dev.kinference.routing.Usage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TranslationTest {

  private static final ObjectMapper M = new ObjectMapper();

  static ObjectNode json(String text) throws Exception {
    return (ObjectNode) M.readTree(text.replace('\'', '"'));
  }

  @Test
  void openAiChatRequestBecomesAValidAnthropicRequest() throws Exception {
    ObjectNode in = json("""
        {'model':'gpt','max_completion_tokens':50,'temperature':1.5,'stop':'END','user':'u1','stream':true,
         'parallel_tool_calls':false,'tool_choice':'required','seed':7,
         'tools':[{'type':'function','function':{'name':'get_weather','description':'Weather',
                   'parameters':{'type':'object','properties':{'city':{'type':'string'}}}}}],
         'messages':[{'role':'system','content':'Be brief.'},{'role':'developer','content':'Use tools.'},
           {'role':'user','content':[{'type':'text','text':'Weather in Paris?'},
                                     {'type':'image_url','image_url':{'url':'data:image/jpeg;base64,AAAA'}}]},
           {'role':'assistant','content':null,'tool_calls':[{'id':'call_1','type':'function',
              'function':{'name':'get_weather','arguments':'{\\'city\\':\\'Paris\\'}'}}]},
           {'role':'tool','tool_call_id':'call_1','content':'18C'},
           {'role':'user','content':'Thanks'}]}""".replace("\\'", "\\\""));
    ObjectNode out = Translation.request(in, ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, "claude-x", 4096);
    assertThat(out.path("model").asText()).isEqualTo("claude-x");
    assertThat(out.path("max_tokens").asInt()).isEqualTo(50);
    assertThat(out.path("temperature").asDouble()).isEqualTo(1.0);
    assertThat(out.path("stop_sequences").get(0).asText()).isEqualTo("END");
    assertThat(out.path("metadata").path("user_id").asText()).isEqualTo("u1");
    assertThat(out.path("stream").asBoolean()).isTrue();
    assertThat(out.has("seed")).isFalse();
    assertThat(out.path("tool_choice").path("type").asText()).isEqualTo("any");
    assertThat(out.path("tool_choice").path("disable_parallel_tool_use").asBoolean()).isTrue();
    assertThat(out.path("tools").get(0).path("input_schema").path("type").asText()).isEqualTo("object");
    assertThat(out.path("system")).hasSize(2);
    JsonNode msgs = out.path("messages");
    assertThat(msgs).hasSize(3);
    assertThat(msgs.get(0).path("content").get(1).path("source").path("media_type").asText())
        .isEqualTo("image/jpeg");
    JsonNode use = msgs.get(1).path("content").get(0);
    assertThat(use.path("type").asText()).isEqualTo("tool_use");
    assertThat(use.path("input").path("city").asText()).isEqualTo("Paris");
    // The tool result opens the next user turn, followed by the user's text.
    JsonNode turn = msgs.get(2).path("content");
    assertThat(turn.get(0).path("type").asText()).isEqualTo("tool_result");
    assertThat(turn.get(0).path("tool_use_id").asText()).isEqualTo("call_1");
    assertThat(turn.get(1).path("text").asText()).isEqualTo("Thanks");
    // And the result parses as a valid Anthropic request.
    RequestParser.defaults().parse(ApiFormat.ANTHROPIC_MESSAGES, M.writeValueAsBytes(out));
  }

  @Test
  void anthropicRequestBecomesAValidOpenAiRequest() throws Exception {
    ObjectNode in = json("""
        {'model':'claude','max_tokens':64,'system':[{'type':'text','text':'Be brief.'}],'stream':true,
         'stop_sequences':['END'],'top_k':5,'metadata':{'user_id':'u1'},
         'tool_choice':{'type':'tool','name':'calc','disable_parallel_tool_use':true},
         'tools':[{'name':'calc','description':'Adds','input_schema':{'type':'object'}}],
         'messages':[{'role':'user','content':'What is 2+2?'},
           {'role':'assistant','content':[{'type':'thinking','thinking':'hmm','signature':'s'},
              {'type':'text','text':'Let me add.'},
              {'type':'tool_use','id':'toolu_1','name':'calc','input':{'a':2,'b':2}}]},
           {'role':'user','content':[{'type':'tool_result','tool_use_id':'toolu_1','content':'4'},
              {'type':'text','text':'And now?'}]}]}""");
    ObjectNode out = Translation.request(in, ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, "gpt-x", 4096);
    assertThat(out.path("model").asText()).isEqualTo("gpt-x");
    assertThat(out.path("max_tokens").asInt()).isEqualTo(64);
    assertThat(out.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(out.has("top_k")).isFalse();
    assertThat(out.path("user").asText()).isEqualTo("u1");
    assertThat(out.path("tool_choice").path("function").path("name").asText()).isEqualTo("calc");
    assertThat(out.path("parallel_tool_calls").asBoolean(true)).isFalse();
    JsonNode msgs = out.path("messages");
    assertThat(msgs.get(0).path("role").asText()).isEqualTo("system");
    assertThat(msgs.get(2).path("content").asText()).isEqualTo("Let me add.");
    JsonNode call = msgs.get(2).path("tool_calls").get(0);
    assertThat(M.readTree(call.path("function").path("arguments").asText()).path("a").asInt()).isEqualTo(2);
    assertThat(msgs.get(3).path("role").asText()).isEqualTo("tool");
    assertThat(msgs.get(3).path("content").asText()).isEqualTo("4");
    assertThat(msgs.get(4).path("content").asText()).isEqualTo("And now?");
    RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, M.writeValueAsBytes(out));
  }

  @Test
  void featuresTheOtherFormatCannotExpressAreRefusedByName() throws Exception {
    ObjectNode n2 = json("{'model':'m','n':2,'messages':[{'role':'user','content':'hi'}]}");
    assertThatThrownBy(() -> Translation.request(n2, ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, "c", 10))
        .isInstanceOf(UnsupportedTranslationException.class).hasMessageContaining("n:");
    ObjectNode schema = json("{'model':'m','response_format':{'type':'json_object'},"
        + "'messages':[{'role':'user','content':'hi'}]}");
    assertThatThrownBy(() -> Translation.request(schema, ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, "c",
        10)).isInstanceOf(UnsupportedTranslationException.class).hasMessageContaining("response_format");
    ObjectNode doc = json("{'model':'m','max_tokens':5,'messages':[{'role':'user','content':[{'type':'document',"
        + "'source':{'type':'text','data':'x'}}]}]}");
    assertThatThrownBy(() -> Translation.request(doc, ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, "g", 10))
        .isInstanceOf(UnsupportedTranslationException.class).hasMessageContaining("messages[0].content[0]");
    assertThat(Translation.canTranslate(ApiFormat.OPENAI_COMPLETIONS, ApiFormat.ANTHROPIC_MESSAGES)).isFalse();
  }

  @Test
  void sameFormatOnlyRenamesTheModelAndAsksForStreamUsage() throws Exception {
    ObjectNode in = json("{'model':'alias','stream':true,'messages':[{'role':'user','content':'hi'}]}");
    ObjectNode out = Translation.request(in, ApiFormat.OPENAI_CHAT, ApiFormat.OPENAI_CHAT, "served", 10);
    assertThat(out.path("model").asText()).isEqualTo("served");
    assertThat(out.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(in.path("model").asText()).isEqualTo("alias");
    assertThat(in.has("stream_options")).isFalse();
  }

  @Test
  void openAiResponseBecomesAnthropicWithToolUseStopReasonAndUsage() throws Exception {
    ObjectNode in = json("""
        {'id':'chatcmpl-1','object':'chat.completion','created':1,'model':'gpt',
         'choices':[{'index':0,'message':{'role':'assistant','content':'Checking.','tool_calls':[{'id':'call_9',
           'type':'function','function':{'name':'f','arguments':'{\\'x\\':1}'}}]},'finish_reason':'tool_calls'}],
         'usage':{'prompt_tokens':100,'completion_tokens':7,'total_tokens':107,
                  'prompt_tokens_details':{'cached_tokens':60}}}""".replace("\\'", "\\\""));
    ObjectNode out = Translation.response(in, ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES);
    assertThat(out.path("type").asText()).isEqualTo("message");
    assertThat(out.path("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(out.path("content").get(0).path("text").asText()).isEqualTo("Checking.");
    assertThat(out.path("content").get(1).path("input").path("x").asInt()).isEqualTo(1);
    assertThat(out.path("usage").path("input_tokens").asInt()).isEqualTo(40);
    assertThat(out.path("usage").path("cache_read_input_tokens").asInt()).isEqualTo(60);
    assertThat(Usages.ofResponse(ApiFormat.ANTHROPIC_MESSAGES, out)).isEqualTo(new Usage(100, 60, 7));
  }

  @Test
  void anthropicResponseBecomesOpenAiWithLengthAndUsage() throws Exception {
    ObjectNode in = json("""
        {'id':'msg_1','type':'message','role':'assistant','model':'claude',
         'content':[{'type':'text','text':'Hello'},{'type':'tool_use','id':'toolu_1','name':'f','input':{'y':2}}],
         'stop_reason':'max_tokens','stop_sequence':null,
         'usage':{'input_tokens':10,'cache_read_input_tokens':30,'cache_creation_input_tokens':0,'output_tokens':5}}""");
    ObjectNode out = Translation.response(in, ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT);
    JsonNode choice = out.path("choices").get(0);
    assertThat(choice.path("finish_reason").asText()).isEqualTo("length");
    assertThat(choice.path("message").path("content").asText()).isEqualTo("Hello");
    assertThat(choice.path("message").path("tool_calls").get(0).path("function").path("arguments").asText())
        .isEqualTo("{\"y\":2}");
    assertThat(Usages.ofResponse(ApiFormat.OPENAI_CHAT, out)).isEqualTo(new Usage(40, 30, 5));
  }

  /** Runs an upstream stream through a translator and parses what the client receives. */
  static List<SseEvent> run(StreamTranslator t, String upstream) {
    ByteArrayOutputStream client = new ByteArrayOutputStream();
    SseParser p = new SseParser(1 << 20, (e, raw) -> {
      if (e != null) {
        t.onEvent(e, raw, client::writeBytes);
      }
    });
    p.feed(upstream);
    List<SseEvent> out = new ArrayList<>();
    SseParser.of(out::add).feed(client.toString(StandardCharsets.UTF_8));
    return out;
  }

  static String openAiStream(String... chunks) {
    StringBuilder sb = new StringBuilder();
    for (String c : chunks) {
      sb.append("data: ").append(c.replace('\'', '"')).append("\n\n");
    }
    return sb.append("data: [DONE]\n\n").toString();
  }

  @Test
  void openAiStreamBecomesAnthropicEventsWithTextToolUseStopAndUsage() throws Exception {
    String upstream = openAiStream(
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{'role':'assistant','content':''}}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{'content':'Hel'}}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{'content':'lo'}}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{'tool_calls':[{'index':0,'id':'call_1',"
            + "'type':'function','function':{'name':'f','arguments':''}}]}}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{'tool_calls':[{'index':0,"
            + "'function':{'arguments':'{}'}}]}}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[{'index':0,'delta':{},'finish_reason':'tool_calls'}]}",
        "{'id':'chatcmpl-7','model':'gpt','choices':[],'usage':{'prompt_tokens':12,'completion_tokens':4,"
            + "'prompt_tokens_details':{'cached_tokens':8}}}");
    StreamTranslator t = Translation.stream(ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, false, "gpt");
    List<SseEvent> events = run(t, upstream);
    assertThat(events).extracting(SseEvent::event).containsExactly("message_start", "content_block_start",
        "content_block_delta", "content_block_delta", "content_block_stop", "content_block_start",
        "content_block_delta", "content_block_stop", "message_delta", "message_stop");
    JsonNode delta = M.readTree(events.get(8).data());
    assertThat(delta.path("delta").path("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(delta.path("usage").path("output_tokens").asInt()).isEqualTo(4);
    assertThat(delta.path("usage").path("cache_read_input_tokens").asInt()).isEqualTo(8);
    assertThat(t.complete()).isTrue();
    assertThat(t.usage()).isEqualTo(new Usage(12, 8, 4));
  }

  @Test
  void anthropicStreamBecomesOpenAiChunksWithUsageChunkOnlyWhenAsked() throws Exception {
    String upstream = """
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":20,"output_tokens":1}}}

        event: ping
        data: {"type":"ping"}

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
    StreamTranslator t = Translation.stream(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, true, "claude");
    List<SseEvent> events = run(t, upstream);
    assertThat(events).hasSize(7);
    assertThat(M.readTree(events.get(0).data()).path("choices").get(0).path("delta").path("role").asText())
        .isEqualTo("assistant");
    assertThat(M.readTree(events.get(1).data()).path("choices").get(0).path("delta").path("content").asText())
        .isEqualTo("Hi");
    JsonNode call = M.readTree(events.get(2).data()).path("choices").get(0).path("delta").path("tool_calls").get(0);
    assertThat(call.path("id").asText()).isEqualTo("toolu_1");
    assertThat(M.readTree(events.get(4).data()).path("choices").get(0).path("finish_reason").asText())
        .isEqualTo("tool_calls");
    JsonNode usage = M.readTree(events.get(5).data()).path("usage");
    assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(25);
    assertThat(usage.path("completion_tokens").asInt()).isEqualTo(9);
    assertThat(events.get(6).isDone()).isTrue();
    assertThat(t.usage()).isEqualTo(new Usage(25, 20, 9));

    StreamTranslator noUsage = Translation.stream(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.OPENAI_CHAT, false, "c");
    assertThat(run(noUsage, upstream)).hasSize(6);
  }

  /** Regression: the response's model was the internal server model even when the client used an alias. */
  @Test
  void passthroughShowsTheModelTheClientAskedFor() {
    String upstream = openAiStream(
        "{'id':'c','model':'Qwen/Qwen3-8B','choices':[{'index':0,'delta':{'content':'x'},'finish_reason':null}]}",
        "{'id':'c','model':'chat','choices':[{'index':0,'delta':{'content':'y'},'finish_reason':'stop'}]}");
    List<SseEvent> events = run(Translation.stream(ApiFormat.OPENAI_CHAT, ApiFormat.OPENAI_CHAT, false, "chat"),
        upstream);
    assertThat(events.subList(0, 2)).extracting(SseEvent::data)
        .allSatisfy(d -> assertThat(d).contains("\"model\":\"chat\"").doesNotContain("Qwen"));
    String anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\","
        + "\"model\":\"internal-7b\",\"usage\":{\"input_tokens\":3,\"output_tokens\":0}}}\n\n";
    List<SseEvent> a = run(Translation.stream(ApiFormat.ANTHROPIC_MESSAGES, ApiFormat.ANTHROPIC_MESSAGES, false,
        "claude-alias"), anthropic);
    assertThat(a.get(0).data()).contains("\"model\":\"claude-alias\"").doesNotContain("internal-7b");
  }

  @Test
  void passthroughKeepsBytesDropsTheUsageChunkTheClientDidNotAskForAndSeesErrors() {
    String upstream = openAiStream(
        "{'id':'c','choices':[{'index':0,'delta':{'content':'x'},'finish_reason':'stop'}]}",
        "{'id':'c','choices':[],'usage':{'prompt_tokens':3,'completion_tokens':1}}");
    StreamTranslator t = Translation.stream(ApiFormat.OPENAI_CHAT, ApiFormat.OPENAI_CHAT, false, "m");
    List<SseEvent> events = run(t, upstream);
    assertThat(events).hasSize(2);
    assertThat(t.usage()).isEqualTo(new Usage(3, 0, 1));
    assertThat(t.finishReason()).isEqualTo("stop");
    assertThat(t.complete()).isTrue();

    StreamTranslator withUsage = Translation.stream(ApiFormat.OPENAI_CHAT, ApiFormat.OPENAI_CHAT, true, "m");
    assertThat(run(withUsage, upstream)).hasSize(3);

    StreamTranslator failing = Translation.stream(ApiFormat.OPENAI_CHAT, ApiFormat.ANTHROPIC_MESSAGES, false, "m");
    List<SseEvent> err = run(failing, "data: {\"error\":{\"message\":\"engine died\",\"type\":\"x\"}}\n\n");
    assertThat(failing.upstreamError()).isEqualTo("engine died");
    assertThat(err).extracting(SseEvent::event).containsExactly("error");
    assertThat(failing.sawContent()).isFalse();
  }

  @Test
  void errorBodiesFollowEachApi() throws Exception {
    JsonNode openAi = M.readTree(ApiErrors.body(ApiFormat.OPENAI_CHAT, 429, "slow down", null));
    assertThat(openAi.path("error").path("type").asText()).isEqualTo("rate_limit_error");
    assertThat(openAi.path("error").path("message").asText()).isEqualTo("slow down");
    JsonNode anthropic = M.readTree(ApiErrors.body(ApiFormat.ANTHROPIC_MESSAGES, 404, "no model", null));
    assertThat(anthropic.path("type").asText()).isEqualTo("error");
    assertThat(anthropic.path("error").path("type").asText()).isEqualTo("not_found_error");
    assertThat(ApiErrors.messageOf(ApiErrors.body(ApiFormat.ANTHROPIC_MESSAGES, 500, "boom", null)))
        .isEqualTo("boom");
    assertThat(ApiErrors.messageOf("{\"detail\":\"bad\"}".getBytes(StandardCharsets.UTF_8))).isEqualTo("bad");
  }
}
