package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Jinja2 semantics, one construct at a time (expected outputs are Python Jinja2's). */
class ChatTemplateTest {

  static String render(String template, Map<String, ?> context) throws TemplateException {
    return ChatTemplate.compile(template).render(context);
  }

  static Map<String, Object> withNull(String key, Map<String, Object> others) {
    Map<String, Object> m = new java.util.HashMap<>(others);
    m.put(key, null);
    return m;
  }

  static String render(String template) throws TemplateException {
    return render(template, Map.of());
  }

  @Test
  void namespaceWithKeywordArgumentsAndReverseSlices() throws Exception {
    assertThat(render("{% set ns = namespace(total=0, seen=false) %}{% for x in [1, 2, 3] %}"
        + "{% set ns.total = ns.total + x %}{% if x == 2 %}{% set ns.seen = true %}{% endif %}{% endfor %}"
        + "{{ ns.total }} {{ ns.seen }}")).isEqualTo("6 True");
    assertThat(render("{{ xs[::-1] }}{{ xs[::2] }}{{ xs[1::2] }}{{ xs[-1:0:-1] }}{{ xs[:-2:-1] }}{{ 'abc'[::-1] }}",
        Map.of("xs", List.of(1, 2, 3, 4, 5)))).isEqualTo("[5, 4, 3, 2, 1][1, 3, 5][2, 4][5, 4, 3, 2][5]cba");
    assertThat(render("{% for m in ms[::-1] %}{{ loop.index0 }}{{ m }}{% endfor %}", Map.of("ms", List.of("a", "b"))))
        .isEqualTo("0b1a");
  }

  @Test
  void whitespaceControlAsTransformersConfiguresIt() throws Exception {
    assertThat(render("{% if true %}\nx\n{% endif %}\ny")).isEqualTo("x\ny");
    assertThat(render("a\n    {% if true %}\n    b\n    {% endif %}\nc")).isEqualTo("a\n    b\nc");
    assertThat(render("a   {{- 'b' -}}   c  {%- if true -%}  d  {%- endif %}")).isEqualTo("abcd");
    assertThat(render("{{ 'a' }}\n{{ 'b' }}\n")).isEqualTo("a\nb"); // Jinja2 drops one final newline
    assertThat(render("a{# gone #}b")).isEqualTo("ab");
    assertThat(render("{% raw %}{{ x }}{% endraw %}")).isEqualTo("{{ x }}");
  }

  @Test
  void pythonValuesPrintAsPythonPrintsThem() throws Exception {
    assertThat(render("{{ none }} {{ true }} {{ false }} {{ [1, 'a', none] }} {{ {'k': 1.0} }} {{ 1.5 + 1 }}"))
        .isEqualTo("None True False [1, 'a', None] {'k': 1.0} 2.5");
    assertThat(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1 / 4 }} {{ 1e20 }} {{ 1e-5 }}"))
        .isEqualTo("3 -4 1 2 1024 0.25 1e+20 1e-05");
    assertThat(render("[{{ missing }}]")).isEqualTo("[]");
    assertThat(render("{{ \"it's\" }} {{ [\"it's\"] }}")).isEqualTo("it's [\"it's\"]");
  }

  @Test
  void filtersTestsAndMethods() throws Exception {
    assertThat(render("{{ '  x  ' | trim }}|{{ xs | length }}|{{ xs | join('-') }}|{{ xs | first }}{{ xs | last }}"
        + "|{{ missing | default('d') }}|{{ 'a' + ' b ' | trim + 'c' }}", Map.of("xs", List.of(1, 2, 3))))
        .isEqualTo("x|3|1-2-3|13|d|abc");
    assertThat(render("{{ ['a', 'code_interpreter', 'b'] | reject('equalto', 'code_interpreter') | join(', ') }}"))
        .isEqualTo("a, b");
    assertThat(render("{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='c') | list }}",
        Map.of("ms", List.of(Map.of("role", "user", "c", 1), Map.of("role", "x", "c", 2)))))
        .isEqualTo("[1]");
    assertThat(render("{{ 'r</think>a'.split('</think>')[-1] }}{{ ' a  b '.split() }}{{ '\\n\\nx\\n'.strip('\\n') }}"))
        .isEqualTo("a['a', 'b']x");
    assertThat(render("{{ x is defined }}{{ y is defined }}{{ n is none }}{{ s is string }}{{ 3 is odd }}"
        + "{{ d is mapping }}{{ s is iterable }}{{ z is none }}", withNull("z",
        Map.of("x", 1, "s", "s", "d", Map.of(), "n", "")))).isEqualTo("TrueFalseFalseTrueTrueTrueTrueTrue");
    assertThat(render("{{ {'b': [1, {'c': 'ü'}], 'a': {}, 'e': []} | tojson(indent=2) }}"))
        .isEqualTo("{\n  \"b\": [\n    1,\n    {\n      \"c\": \"ü\"\n    }\n  ],\n  \"a\": {},\n  \"e\": []\n}");
    assertThat(render("{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}{{ d.get('q', 'z') }}",
        Map.of("d", Map.of("a", 1)))).isEqualTo("a=1;z");
  }

  @Test
  void loopsBreakContinueElseAndMacros() throws Exception {
    assertThat(render("{% for n in [1, 2, 3, 4] %}{% if n == 2 %}{% continue %}{% endif %}{% if n == 4 %}"
        + "{% break %}{% endif %}{{ n }}{% endfor %}{% for x in [] %}x{% else %}empty{% endfor %}"))
        .isEqualTo("13empty");
    assertThat(render("{% for x in [1, 2, 3, 4] if x % 2 == 0 %}{{ loop.index }}/{{ loop.length }}:{{ x }}"
        + "{% if not loop.last %},{% endif %}{% endfor %}")).isEqualTo("1/2:2,2/2:4");
    assertThat(render("{% set a = 1 %}{% for x in [1] %}{% set a = 2 %}{{ a }}{% endfor %}{{ a }}"))
        .isEqualTo("21");
    assertThat(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
        + "{{ greet('A') }} {{ greet('B', punct='?') }}")).isEqualTo("Hi A! Hi B?");
    assertThat(render("{% set block %}x{{ 1 + 1 }}{% endset %}[{{ block }}]")).isEqualTo("[x2]");
  }

  @Test
  void strftimeNowReadsTheClock() throws Exception {
    ChatTemplate t = ChatTemplate.compile("{{ strftime_now('%d %b %Y') }}")
        .withClock(() -> ZonedDateTime.of(2026, 3, 5, 10, 0, 0, 0, ZoneOffset.UTC));
    assertThat(t.render(Map.of())).isEqualTo("05 Mar 2026");
  }

  @Test
  void whatItCannotRenderFailsLoudly() {
    assertThatThrownBy(() -> ChatTemplate.compile("{% include 'x.jinja' %}")).isInstanceOf(TemplateException.class)
        .hasMessageContaining("'include' statement is not supported");
    assertThatThrownBy(() -> ChatTemplate.compile("{{ x | frobnicate }}")).hasMessageContaining(
        "no filter named 'frobnicate'");
    assertThatThrownBy(() -> ChatTemplate.compile("{{ x is frobnicated }}")).hasMessageContaining(
        "no test named 'frobnicated'");
    assertThatThrownBy(() -> ChatTemplate.compile("{% if x %}")).hasMessageContaining("missing one of [elif, else, endif]");
    assertThatThrownBy(() -> ChatTemplate.compile("{{ 'unterminated }}")).hasMessageContaining("unterminated");
    assertThatThrownBy(() -> render("{{ xs.append(1) }}", Map.of("xs", List.of())))
        .isInstanceOf(TemplateException.class).hasMessageContaining("unsafe");
    assertThatThrownBy(() -> render("{{ missing.attr }}")).hasMessageContaining("undefined");
    assertThatThrownBy(() -> render("{{ 'a' + 1 }}")).hasMessageContaining("unsupported operand types");
    assertThatThrownBy(() -> render("{{ raise_exception('no system role') }}"))
        .hasMessage("the chat template raised: no system role");
    assertThatThrownBy(() -> render("{{ 'x'.encode() }}")).hasMessageContaining("not callable");
    // Python would pad to a ten-billion-character string; the engine names the field instead of overflowing
    assertThatThrownBy(() -> render("{{ '{:9999999999}'.format('a') }}")).isInstanceOf(TemplateException.class)
        .hasMessageContaining("the field {:9999999999} is not supported");
    assertThatThrownBy(() -> render("{{ '{:,}'.format(1000) }}")).isInstanceOf(TemplateException.class)
        .hasMessageContaining("not supported by this chat-template engine");
  }
}
