package dev.kinference.vllm.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.RequestParser;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The in-process tokenizer on the real Qwen3 tokenizer equals the independent reference (Hugging Face's JavaScript
 * template engine and tokenizers, src/test/reference/make-reference.mjs) on the chat corpus: from the request, as
 * the router calls it. Skipped when the Qwen3 tokenizer files are not present (they are not committed).
 */
class HuggingFaceTokenizerTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static HuggingFaceTokenizer qwen3;

  static Path qwen3Directory() {
    List<Path> candidates = new ArrayList<>();
    String configured = System.getenv("KINFERENCE_QWEN3_TOKENIZER");
    if (configured != null) {
      candidates.add(Path.of(configured));
    }
    candidates.add(Path.of("../../shared/data/tokenizers/qwen3"));
    candidates.add(Path.of("../../../shared/data/tokenizers/qwen3"));
    candidates.add(Path.of("/work/shared/data/tokenizers/qwen3"));
    for (Path p : candidates) {
      if (Files.isRegularFile(p.resolve("tokenizer.json")) && Files.isRegularFile(p.resolve("tokenizer_config.json"))) {
        return p;
      }
    }
    return null;
  }

  @BeforeAll
  static void load() throws Exception {
    Path dir = qwen3Directory();
    Assumptions.assumeTrue(dir != null, "the Qwen3 tokenizer is not available");
    qwen3 = HuggingFaceTokenizer.fromDirectory(dir);
  }

  @AfterAll
  static void close() {
    if (qwen3 != null) {
      qwen3.close();
    }
  }

  static Stream<Arguments> qwen3Cases() throws Exception {
    JsonNode corpus = JSON.readTree(Files.readString(Path.of("src/test/reference/corpus.json")));
    JsonNode reference;
    try (InputStream in = HuggingFaceTokenizerTest.class.getResourceAsStream("/reference/chat-reference.json")) {
      reference = JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    List<Arguments> out = new ArrayList<>();
    for (int i = 0; i < corpus.get("cases").size(); i++) {
      JsonNode r = reference.get("cases").get(i);
      if (r.has("ids")) {
        out.add(Arguments.of(r.get("name").asText(), corpus.get("cases").get(i).get("context"), r));
      }
    }
    return out.stream();
  }

  /** The OpenAI request a client would send for a template context (tool-call arguments as JSON text). */
  static InferenceRequest request(JsonNode context) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", "Qwen/Qwen3-8B");
    ArrayNode messages = body.putArray("messages");
    for (JsonNode m : context.get("messages")) {
      ObjectNode copy = m.deepCopy();
      if (copy.has("tool_calls")) {
        for (JsonNode call : copy.get("tool_calls")) {
          ObjectNode fn = (ObjectNode) call.get("function");
          if (!fn.get("arguments").isTextual()) {
            fn.put("arguments", JSON.writeValueAsString(fn.get("arguments")));
          }
        }
      }
      messages.add(copy);
    }
    if (context.has("tools")) {
      body.set("tools", context.get("tools"));
    }
    if (context.has("enable_thinking")) {
      body.putObject("chat_template_kwargs").set("enable_thinking", context.get("enable_thinking"));
    }
    if (context.has("add_generation_prompt") && !context.get("add_generation_prompt").asBoolean()) {
      body.put("add_generation_prompt", false);
    }
    return RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, body.toString().getBytes(StandardCharsets.UTF_8));
  }

  static int[] ids(JsonNode reference) {
    int[] ids = new int[reference.get("ids").size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = reference.get("ids").get(i).asInt();
    }
    return ids;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("qwen3Cases")
  void tokenizesChatRequestsExactlyAsTheReference(String name, JsonNode context, JsonNode reference)
      throws Exception {
    InferenceRequest request = request(context);

    assertThat(qwen3.render(request)).isEqualTo(reference.get("rendered").asText());
    assertThat(qwen3.tokenize(request)).containsExactly(ids(reference));
    assertThat(qwen3.encodeRendered(reference.get("rendered").asText())).containsExactly(ids(reference));
  }

  @Test
  void encodesPiecewiseAndANextTurnReusesThePiecesOfThePreviousOne() throws Exception {
    assertThat(qwen3.isPiecewise()).isTrue();
    InferenceRequest turn1 = InferenceRequest.builder("Qwen/Qwen3-8B").system("Be brief.").user("Name a colour.")
        .build();
    InferenceRequest turn2 = turn1.toBuilder().assistant("Blue.").user("Another one, in 中文?").build();
    int[] first = qwen3.tokenize(turn1);
    int[] second = qwen3.tokenize(turn2);

    // The next turn's prompt starts with the previous prompt minus its generation prompt.
    int generationPrompt = qwen3.encodeRendered("<|im_start|>assistant\n").length;
    assertThat(java.util.Arrays.copyOf(second, first.length - generationPrompt))
        .containsExactly(java.util.Arrays.copyOf(first, first.length - generationPrompt));
    try (HuggingFaceTokenizer fresh = HuggingFaceTokenizer.fromDirectory(qwen3Directory())) {
      assertThat(fresh.tokenize(turn2)).containsExactly(second);
    }
  }

  @Test
  void completionPromptsAndTokenIdsPassThrough() throws Exception {
    InferenceRequest text = InferenceRequest.builder("Qwen/Qwen3-8B").prompt("Hello world").build();
    assertThat(qwen3.tokenize(text)).isNotEmpty();
    InferenceRequest ids = InferenceRequest.builder("Qwen/Qwen3-8B").promptTokenIds(new int[] {1, 2, 3}).build();
    assertThat(qwen3.tokenize(ids)).containsExactly(1, 2, 3);
  }

  @Test
  void whatItCannotTokenizeExactlyIsRefusedWithAReason() throws Exception {
    String image = """
        {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
          {"type": "image_url", "image_url": {"url": "http://example.invalid/x.png"}}]}]}""";
    InferenceRequest withImage = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT,
        image.getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> qwen3.tokenize(withImage)).isInstanceOf(TokenizationException.class)
        .hasMessageContaining("multimodal");
    String cont = """
        {"model": "m", "continue_final_message": true,
         "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hel"}]}""";
    InferenceRequest continuing = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT,
        cont.getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> qwen3.tokenize(continuing)).hasMessageContaining("continue_final_message");
  }

  @Test
  void aChatTemplateJinjaFileTakesPriorityOverTheConfigAndToolUseHasItsOwn(@TempDir Path dir) throws Exception {
    Files.copy(qwen3Directory().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
    Files.writeString(dir.resolve("tokenizer_config.json"),
        "{\"eos_token\": \"<|im_end|>\", \"chat_template\": \"from the config\"}");
    Files.writeString(dir.resolve("chat_template.jinja"),
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ eos_token }}\n");
    InferenceRequest chat = InferenceRequest.builder("gpt-oss").user("hi").build();
    try (HuggingFaceTokenizer t = HuggingFaceTokenizer.fromDirectory(dir)) {
      assertThat(t.render(chat)).isEqualTo("<user>hi<|im_end|>");
    }

    Files.createDirectories(dir.resolve("additional_chat_templates"));
    Files.writeString(dir.resolve("additional_chat_templates/tool_use.jinja"),
        "tools: {{ tools | map(attribute='function.name') | join(',') }}");
    String withTools = """
        {"model": "m", "messages": [{"role": "user", "content": "weather?"}],
         "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]}""";
    InferenceRequest toolRequest = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT,
        withTools.getBytes(StandardCharsets.UTF_8));
    try (HuggingFaceTokenizer t = HuggingFaceTokenizer.fromDirectory(dir)) {
      assertThat(t.render(toolRequest)).isEqualTo("tools: get_weather");
      assertThat(t.render(chat)).isEqualTo("<user>hi<|im_end|>");
    }
  }
}
