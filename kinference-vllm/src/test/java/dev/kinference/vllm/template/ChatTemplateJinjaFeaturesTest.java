package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Jinja2 behaviours issue 26 found missing, one test each. Every expected string is what Python's Jinja2 3.1
 * renders for the same template and values in transformers' environment (render_corpus.py's).
 */
class ChatTemplateJinjaFeaturesTest {

  static String render(String template, Map<String, ?> context) throws TemplateException {
    return ChatTemplate.compile(template).render(context);
  }

  static String render(String template) throws TemplateException {
    return render(template, Map.of());
  }

  @Test
  void tojsonTakesSeparatorsEnsureAsciiSortKeysAndIndent() throws Exception {
    assertThat(render("{{ [{'name': 'f', 'parameters': {'a': [1, 2.5, none, true]}}]"
        + " | tojson(separators=(',', ':')) }}"))
        .isEqualTo("[{\"name\":\"f\",\"parameters\":{\"a\":[1,2.5,null,true]}}]");
    assertThat(render("{{ x | tojson(ensure_ascii=True) }}",
        Map.of("x", new java.util.LinkedHashMap<>(Map.of("s", "Zürich 日本 🙂 \u007f")))))
        .isEqualTo("{\"s\": \"Z\\u00fcrich \\u65e5\\u672c \\ud83d\\ude42 \\u007f\"}");
    assertThat(render("{{ x | tojson }}", Map.of("x", "Zürich 🙂"))).isEqualTo("\"Zürich 🙂\"");
    assertThat(render("{{ {'b': 1, 'a': {'d': 2, 'c': 3}} | tojson(sort_keys=True) }}"))
        .isEqualTo("{\"a\": {\"c\": 3, \"d\": 2}, \"b\": 1}");
    assertThat(render("{{ {'a': [1, {}], 'b': []} | tojson(indent=2, separators=(',', ': ')) }}"))
        .isEqualTo("{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
    assertThat(render("{{ {'a': [1]} | tojson(indent='\\t') }}")).isEqualTo("{\n\t\"a\": [\n\t\t1\n\t]\n}");
    assertThat(render("{{ {1: 'a', none: 'c', 2.5: 'd'} | tojson }}{{ {true: 'b'} | tojson }}"))
        .isEqualTo("{\"1\": \"a\", \"null\": \"c\", \"2.5\": \"d\"}{\"true\": \"b\"}");
    assertThatThrownBy(() -> render("{{ 'x' | tojson(separators=(',',)) }}")).isInstanceOf(TemplateException.class)
        .hasMessageContaining("separators must be a pair of strings");
  }

  @Test
  void nestedBracesDoNotCloseATag() throws Exception {
    assertThat(render("{{ {'a': {'b': 1}} }}|{% set x = {'k': {'j': 2}} %}{{ x }}"))
        .isEqualTo("{'a': {'b': 1}}|{'k': {'j': 2}}");
  }

  @Test
  void oneFinalNewlineOfTheSourceIsDropped() throws Exception {
    assertThat(render("line\n")).isEqualTo("line");
    assertThat(render("a\r\nb\r\n")).isEqualTo("a\nb");
    assertThat(render("{{ 'x' }}\n\n")).isEqualTo("x\n");
    assertThat(ChatTemplate.compile("line\n").source()).isEqualTo("line\n");
  }

  @Test
  void callBlocksPassTheirBodyAsCaller() throws Exception {
    assertThat(render("{% macro box(title) %}[{{ title }}: {{ caller() }}]{% endmacro %}"
        + "{% call box('t') %}body{% endcall %}")).isEqualTo("[t: body]");
    assertThat(render("{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}"
        + "{% call(x) each([1, 2]) %}<{{ x }}>{% endcall %}")).isEqualTo("<1><2>");
    assertThatThrownBy(() -> ChatTemplate.compile("{% call 'x' %}{% endcall %}"))
        .hasMessageContaining("{% call %} needs a macro call");
  }

  @Test
  void starArgsAndMacroVarargsAndKwargs() throws Exception {
    assertThat(render("{% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}"
        + "{{ m(1, 2, 3, 4, c=5) }}")).isEqualTo("1-2-(3, 4)-{'c': 5}");
    assertThat(render("{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{% set xs = [1, 2] %}{{ m(*xs) }}|"
        + "{{ m(**{'a': 'x', 'b': 'y'}) }}")).isEqualTo("12|xy");
    assertThatThrownBy(() -> render("{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"))
        .hasMessageContaining("macro 'm' takes not more than 1 argument(s)");
    assertThatThrownBy(() -> render("{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, z=2) }}"))
        .hasMessageContaining("macro 'm' takes no keyword argument 'z'");
  }

  @Test
  void groupbyBatchTruncateAndFormat() throws Exception {
    List<Map<String, Object>> ms = List.of(Map.of("role", "user", "c", 1), Map.of("role", "assistant", "c", 2),
        Map.of("role", "User", "c", 3));
    assertThat(render("{% for g in ms | groupby('role') %}{{ g.grouper }}:"
        + "{{ g.list | map(attribute='c') | join(',') }};{% endfor %}", Map.of("ms", ms)))
        .isEqualTo("assistant:2;user:1,3;");
    assertThat(render("{% for role, items in ms | groupby('role', case_sensitive=true) %}{{ role }}="
        + "{{ items | length }};{% endfor %}", Map.of("ms", List.of(Map.of("role", "b"), Map.of("role", "a"),
        Map.of("role", "b"))))).isEqualTo("a=1;b=2;");
    assertThat(render("{{ [1, 2, 3, 4, 5] | batch(2) | list }}{{ [1, 2, 3] | batch(2, 0) | list }}"))
        .isEqualTo("[[1, 2], [3, 4], [5]][[1, 2], [3, 0]]");
    assertThat(render("{{ 'The quick brown fox jumps over the lazy dog' | truncate(20) }}|"
        + "{{ 'The quick brown fox jumps' | truncate(20, true) }}|{{ 'short enough text' | truncate(15) }}|"
        + "{{ 'abcdefghij' | truncate(5, end='~', leeway=0) }}"))
        .isEqualTo("The quick brown...|The quick brown fox jumps|short enough text|abcd~");
    assertThat(render("{{ '%s=%r, %d%% %5.2f|%-4s|%03d' % ('k', 'v', 42, 3.14159, 'ab', 7) }}"
        + "{{ '%sr' | format('x') }}")).isEqualTo("k='v', 42%  3.14|ab  |007xr");
  }

  @Test
  void selectingFromNoneYieldsNothing() throws Exception {
    assertThat(render("{{ none | selectattr('role', 'equalto', 'user') | list }}{{ none | map(attribute='x') | list }}"
        + "{{ none | reject('none') | list }}")).isEqualTo("[][][]");
    Map<String, Object> withNullTools = new java.util.HashMap<>();
    withNullTools.put("tools", null);
    assertThat(render("{{ tools | selectattr('type', 'eq', 'function') | list | length }}", withNullTools))
        .isEqualTo("0");
  }

  @Test
  void tuplesPrintAsTuples() throws Exception {
    assertThat(render("{{ (1, 2) }} {{ (1,) }} {{ () }} {{ {'a': 1}.items() | list }} {{ ('a', [1, (2, 3)]) }}"))
        .isEqualTo("(1, 2) (1,) () [('a', 1)] ('a', [1, (2, 3)])");
    assertThat(render("{{ (1, 2) == [1, 2] }} {{ (1, 2) == (1, 2) }} {{ (1, 2) + (3,) }}"))
        .isEqualTo("False True (1, 2, 3)");
  }

  @Test
  void integersFrom2To63OnStayExact() throws Exception {
    BigInteger n = BigInteger.TWO.pow(64);
    assertThat(render("{{ n }} {{ n + 1 }} {{ 2 ** 64 }} {{ 9223372036854775807 + 1 }} {{ -9223372036854775808 - 1 }}"
        + " {{ n // 3 }} {{ n % 7 }} {{ n is integer }}", Map.of("n", n)))
        .isEqualTo("18446744073709551616 18446744073709551617 18446744073709551616 9223372036854775808"
            + " -9223372036854775809 6148914691236517205 2 True");
    com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree("{\"id\": 18446744073709551616}");
    assertThat(render("{{ x.id }} {{ x | tojson }}", Map.of("x", json)))
        .isEqualTo("18446744073709551616 {\"id\": 18446744073709551616}");
  }

  @Test
  void splitWithNoSeparatorAndALimitKeepsTheRest() throws Exception {
    assertThat(render("{{ 'a b  c  '.split(none, 1) }}{{ '  a b c '.split(none, 2) }}{{ ' a b '.rsplit(none, 1) }}"
        + "{{ 'a b '.split(none, 1) }}")).isEqualTo("['a', 'b  c  ']['a', 'b', 'c '][' a', 'b']['a', 'b ']");
  }
}
