package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every real chat template of {@code src/test/resources/templates/corpus} renders every chat of its
 * {@code chats.json} byte for byte as Python's Jinja2 renders it when configured as transformers configures it
 * (the renderings in {@code expected/} are written by {@code src/test/python/render_corpus.py}). Where Jinja2
 * fails, this engine fails too; where the template itself raises, with the same message.
 */
class ChatTemplateCorpusTest {

  static final Path CORPUS = Path.of("src/test/resources/templates/corpus");
  static final ObjectMapper JSON = new ObjectMapper();

  static Stream<Arguments> renderings() throws IOException {
    JsonNode spec = JSON.readTree(CORPUS.resolve("chats.json").toFile());
    List<Arguments> out = new ArrayList<>();
    List<Path> expected;
    try (Stream<Path> files = Files.list(CORPUS.resolve("expected"))) {
      expected = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    for (Path file : expected) {
      JsonNode e = JSON.readTree(file.toFile());
      JsonNode renderings = e.get("renderings");
      for (int i = 0; i < renderings.size(); i++) {
        JsonNode chat = spec.get("chats").get(i);
        assertThat(renderings.get(i).get("chat").asText()).isEqualTo(chat.get("name").asText());
        out.add(Arguments.of(e.get("template").asText(), chat.get("name").asText(), spec, chat, renderings.get(i)));
      }
    }
    return out.stream();
  }

  @Test
  void theCorpusHasThirtyTemplatesOrMore() throws IOException {
    try (Stream<Path> files = Files.list(CORPUS)) {
      assertThat(files.filter(p -> p.toString().endsWith(".jinja")).count()).isGreaterThanOrEqualTo(30);
    }
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("renderings")
  void rendersAsJinja2(String template, String chatName, JsonNode spec, JsonNode chat, JsonNode expected)
      throws Exception {
    String source = Files.readString(CORPUS.resolve(template));
    Map<String, Object> context = new HashMap<>();
    spec.get("special_tokens").properties().forEach(e -> context.put(e.getKey(), e.getValue()));
    context.put("messages", chat.get("messages"));
    context.put("tools", chat.has("tools") ? chat.get("tools") : null);
    context.put("documents", chat.has("documents") ? chat.get("documents") : null);
    context.put("add_generation_prompt", chat.get("add_generation_prompt").asBoolean());
    if (chat.has("template_kwargs")) {
      chat.get("template_kwargs").properties().forEach(e -> context.put(e.getKey(), e.getValue()));
    }
    ZonedDateTime now = LocalDateTime.parse(spec.get("clock").asText()).atZone(ZoneOffset.UTC);

    if (expected.has("rendered")) {
      ChatTemplate compiled = ChatTemplate.compile(source).withClock(() -> now);
      assertThat(compiled.render(context)).isEqualTo(expected.get("rendered").asText());
    } else if (expected.get("raised").asBoolean()) {
      String message = expected.get("error").asText().substring("RaisedByTemplate: ".length());
      ChatTemplate compiled = ChatTemplate.compile(source).withClock(() -> now);
      assertThatThrownBy(() -> compiled.render(context)).isInstanceOf(TemplateException.class)
          .hasMessage("the chat template raised: " + message);
    } else {
      assertThatThrownBy(() -> ChatTemplate.compile(source).withClock(() -> now).render(context))
          .isInstanceOf(TemplateException.class);
    }
  }
}
