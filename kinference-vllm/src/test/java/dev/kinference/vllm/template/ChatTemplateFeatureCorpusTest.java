package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
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
 * One small template per Jinja2 feature ({@code src/test/resources/templates/features/cases.json}) renders as
 * Python's Jinja2 renders it in transformers' environment ({@code expected.json}, written by render_corpus.py).
 * The few constructs this engine does not implement must fail with a {@link TemplateException} naming them, never
 * render something else.
 */
class ChatTemplateFeatureCorpusTest {

  static final Path FEATURES = Path.of("src/test/resources/templates/features");
  /** What the engine refuses: filters no chat template uses, recursive loops. */
  static final List<String> UNSUPPORTED = List.of("wordwrap", "striptags", "pprint", "urlencode", "filesizeformat",
      " recursive ");

  static Stream<Arguments> cases() throws IOException {
    ObjectMapper json = new ObjectMapper();
    JsonNode cases = json.readTree(FEATURES.resolve("cases.json").toFile());
    JsonNode expected = json.readTree(FEATURES.resolve("expected.json").toFile()).get("renderings");
    assertThat(expected.size()).isEqualTo(cases.size());
    List<Arguments> out = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      out.add(Arguments.of(cases.get(i).get("template").asText(), cases.get(i).get("context"), expected.get(i)));
    }
    return out.stream();
  }

  @Test
  void coversOverOneHundredFiftyFeatures() throws IOException {
    assertThat(cases().count()).isGreaterThan(150);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void rendersAsJinja2(String template, JsonNode values, JsonNode expected) {
    Map<String, Object> context = new HashMap<>();
    values.properties().forEach(e -> context.put(e.getKey(), e.getValue()));
    ZonedDateTime now = ZonedDateTime.of(2026, 3, 5, 10, 0, 0, 0, ZoneOffset.UTC);
    if (UNSUPPORTED.stream().anyMatch(template::contains)) {
      assertThatThrownBy(() -> ChatTemplate.compile(template).withClock(() -> now).render(context))
          .isInstanceOf(TemplateException.class).hasMessageContaining("chat-template engine");
    } else if (expected.has("rendered")) {
      assertThat(renderOrMessage(template, context, now)).isEqualTo(expected.get("rendered").asText());
    } else if (expected.get("raised").asBoolean()) {
      assertThatThrownBy(() -> ChatTemplate.compile(template).withClock(() -> now).render(context))
          .hasMessage("the chat template raised: " + expected.get("error").asText().replaceFirst("^\\w+: ", ""));
    } else {
      assertThatThrownBy(() -> ChatTemplate.compile(template).withClock(() -> now).render(context))
          .isInstanceOf(TemplateException.class);
    }
  }

  private static String renderOrMessage(String template, Map<String, Object> context, ZonedDateTime now) {
    try {
      return ChatTemplate.compile(template).withClock(() -> now).render(context);
    } catch (TemplateException e) {
      return "TemplateException: " + e.getMessage();
    }
  }
}
