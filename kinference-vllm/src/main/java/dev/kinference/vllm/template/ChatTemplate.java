package dev.kinference.vllm.template;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A Hugging Face chat template (the Jinja2 source in {@code tokenizer_config.json}), compiled once and rendered
 * with the semantics transformers gives it, which is what vLLM applies: Jinja2 with {@code trim_blocks} and
 * {@code lstrip_blocks}, loop controls, the sandbox's immutable values, the globals {@code raise_exception} and
 * {@code strftime_now}, and a {@code tojson} that is Python's {@code json.dumps} with {@code ensure_ascii=False} by
 * default and the {@code indent}, {@code separators}, {@code sort_keys} and {@code ensure_ascii} arguments.
 *
 * <p>The engine implements the Jinja2 chat templates use: {@code if/elif/else}, {@code for} (with {@code else}, an
 * inline {@code if}, tuple targets and the {@code loop} variable), {@code set} (including {@code namespace}
 * attributes and block sets), {@code macro} (with {@code varargs}, {@code kwargs} and {@code caller}),
 * {@code call}, {@code filter}, {@code with}, {@code break}/{@code continue}, {@code raw}, transformers'
 * {@code generation} block; Python expressions with slices ({@code messages[::-1]}), keyword and {@code *}/{@code **}
 * arguments, tuples, ints of any size, {@code %} formatting, methods of str, dict and list, Jinja2's built-in filters
 * and tests; the source is read as Jinja2 reads it (line breaks normalised, one final newline dropped). Anything else,
 * such as {@code include}, a recursive loop, a filter no chat template uses or a mutating method, fails compilation
 * or rendering with a {@link TemplateException} that names it: a template is rendered exactly or not at all.
 *
 * <p>Immutable and thread-safe; each {@link #render} call has its own state.
 */
public final class ChatTemplate {

  private final String source;
  private final List<Ast.Node> nodes;
  private final Supplier<ZonedDateTime> clock;

  private ChatTemplate(String source, List<Ast.Node> nodes, Supplier<ZonedDateTime> clock) {
    this.source = source;
    this.nodes = nodes;
    this.clock = clock;
  }

  /**
   * Compiles {@code source}.
   *
   * @throws TemplateException if it is not valid Jinja2 or uses what this engine does not implement
   */
  public static ChatTemplate compile(String source) throws TemplateException {
    Objects.requireNonNull(source, "source");
    try {
      return new ChatTemplate(source, TemplateParser.parse(source), () -> ZonedDateTime.now(ZoneOffset.UTC));
    } catch (TemplateException.Unchecked e) {
      throw new TemplateException("cannot compile the chat template: " + e.getMessage());
    } catch (RuntimeException | StackOverflowError e) {
      throw new TemplateException("cannot compile the chat template: " + e, e);
    }
  }

  /** This template with {@code strftime_now} reading {@code clock} (for reproducible dates). */
  public ChatTemplate withClock(Supplier<ZonedDateTime> clock) {
    return new ChatTemplate(source, nodes, Objects.requireNonNull(clock, "clock"));
  }

  public String source() {
    return source;
  }

  /**
   * Renders with {@code context} ({@code messages}, {@code tools}, {@code add_generation_prompt},
   * {@code bos_token}, ...). Values may be maps, lists, strings, numbers, booleans, null, or Jackson
   * {@link JsonNode}s; they are converted to the template's Python-like values.
   *
   * @throws TemplateException when rendering fails, including the template's own {@code raise_exception}
   */
  public String render(Map<String, ?> context) throws TemplateException {
    Map<String, @Nullable Object> values = new LinkedHashMap<>();
    context.forEach((k, v) -> values.put(k, toTemplateValue(v)));
    try {
      return Interpreter.render(nodes, Builtins.globals(clock), values);
    } catch (Builtins.RaisedException e) {
      throw new TemplateException("the chat template raised: " + e.getMessage());
    } catch (TemplateException.Unchecked e) {
      throw new TemplateException("cannot render the chat template: " + e.getMessage());
    } catch (ArithmeticException | IndexOutOfBoundsException | ClassCastException | StackOverflowError e) {
      throw new TemplateException("cannot render the chat template: " + e, e);
    }
  }

  /** Converts Java and Jackson values to the template's: ints to long (BigInteger from 2^63), floats to double. */
  static @Nullable Object toTemplateValue(@Nullable Object v) {
    if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Double) {
      return v;
    }
    if (v instanceof java.math.BigInteger b) {
      return Py.normalize(b);
    }
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof Float f) {
      return f.doubleValue();
    }
    if (v instanceof Number n) {
      return n.doubleValue();
    }
    if (v instanceof JsonNode node) {
      return fromJson(node);
    }
    if (v instanceof Map<?, ?> m) {
      Map<@Nullable Object, @Nullable Object> out = new LinkedHashMap<>();
      m.forEach((k, x) -> out.put(toTemplateValue(k), toTemplateValue(x)));
      return out;
    }
    if (v instanceof Iterable<?> it) {
      List<@Nullable Object> out = new ArrayList<>();
      it.forEach(x -> out.add(toTemplateValue(x)));
      return out;
    }
    if (v instanceof Object[] array) {
      List<@Nullable Object> out = new ArrayList<>();
      for (Object x : array) {
        out.add(toTemplateValue(x));
      }
      return out;
    }
    throw new IllegalArgumentException("cannot pass a " + v.getClass().getName() + " to a chat template");
  }

  private static @Nullable Object fromJson(JsonNode node) {
    if (node.isNull() || node.isMissingNode()) {
      return null;
    }
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isIntegralNumber()) {
      return node.canConvertToLong() ? (Object) node.longValue() : Py.normalize(node.bigIntegerValue());
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    if (node.isArray()) {
      List<@Nullable Object> out = new ArrayList<>(node.size());
      node.forEach(x -> out.add(fromJson(x)));
      return out;
    }
    Map<@Nullable Object, @Nullable Object> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      out.put(e.getKey(), fromJson(e.getValue()));
    }
    return out;
  }
}
