package dev.kinference.vllm.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Python's {@code json.dumps(v, ensure_ascii=..., indent=..., separators=..., sort_keys=...)}, which transformers
 * installs as the {@code tojson} filter of chat templates (with {@code ensure_ascii=False} by default). Hand-written
 * rather than Jackson because the output must match Python's byte for byte: its float repr, its separators, its
 * escapes ({@code \\uXXXX} in lower case, surrogate pairs), its key coercion ({@code True} becomes
 * {@code "true"}).
 */
final class PyJson {

  private final boolean ensureAscii;
  private final @Nullable String indent;
  private final String itemSeparator;
  private final String keySeparator;
  private final boolean sortKeys;
  private final StringBuilder out = new StringBuilder();

  private PyJson(boolean ensureAscii, @Nullable String indent, String itemSeparator, String keySeparator,
      boolean sortKeys) {
    this.ensureAscii = ensureAscii;
    this.indent = indent;
    this.itemSeparator = itemSeparator;
    this.keySeparator = keySeparator;
    this.sortKeys = sortKeys;
  }

  /**
   * {@code json.dumps} with Python's arguments: {@code indent} is null, an int (that many spaces) or a string;
   * {@code separators} null or an (item, key) pair, defaulting to {@code (", ", ": ")} without indent and
   * {@code (",", ": ")} with.
   */
  static String dumps(@Nullable Object v, boolean ensureAscii, @Nullable Object indent, @Nullable Object separators,
      boolean sortKeys) {
    String indentText = switch (indent) {
      case null -> null;
      case String s -> s;
      default -> " ".repeat((int) Math.max(0, Py.toLong(indent)));
    };
    String item = indentText == null ? ", " : ",";
    String key = ": ";
    if (separators != null) {
      List<@Nullable Object> pair = Py.iterate(separators);
      if (pair.size() != 2 || !(pair.get(0) instanceof String i) || !(pair.get(1) instanceof String k)) {
        throw TemplateException.fail("tojson: separators must be a pair of strings, got " + Py.repr(separators));
      }
      item = i;
      key = k;
    }
    PyJson json = new PyJson(ensureAscii, indentText, item, key, sortKeys);
    json.write(v, 0);
    return json.out.toString();
  }

  private void write(@Nullable Object v, int depth) {
    switch (v) {
      case null -> out.append("null");
      case Boolean b -> out.append(b ? "true" : "false");
      case Long l -> out.append(l);
      case java.math.BigInteger b -> out.append(b);
      case Double d -> out.append(number(d));
      case String s -> string(s);
      case List<?> list -> writeList(list, depth);
      case Map<?, ?> map -> writeMap(map, depth);
      default -> throw TemplateException.fail("Object of type " + Py.typeName(v) + " is not JSON serializable");
    }
  }

  private static String number(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    return Py.floatRepr(d);
  }

  private void writeList(List<?> list, int depth) {
    if (list.isEmpty()) {
      out.append("[]");
      return;
    }
    out.append('[');
    for (int i = 0; i < list.size(); i++) {
      if (i > 0) {
        out.append(itemSeparator);
      }
      newline(depth + 1);
      write(list.get(i), depth + 1);
    }
    newline(depth);
    out.append(']');
  }

  private void writeMap(Map<?, ?> map, int depth) {
    if (map.isEmpty()) {
      out.append("{}");
      return;
    }
    List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
    if (sortKeys) {
      entries.sort((a, b) -> Py.compare(a.getKey(), b.getKey()));
    }
    out.append('{');
    boolean first = true;
    for (Map.Entry<?, ?> e : entries) {
      if (!first) {
        out.append(itemSeparator);
      }
      first = false;
      newline(depth + 1);
      string(key(e.getKey()));
      out.append(keySeparator);
      write(e.getValue(), depth + 1);
    }
    newline(depth);
    out.append('}');
  }

  /** Python coerces basic keys to strings: {@code True} to {@code "true"}, {@code 1.5} to {@code "1.5"}. */
  private static String key(@Nullable Object k) {
    return switch (k) {
      case String s -> s;
      case null -> "null";
      case Boolean b -> b ? "true" : "false";
      case Long l -> l.toString();
      case java.math.BigInteger b -> b.toString();
      case Double d -> number(d);
      default -> throw TemplateException.fail("keys must be str, int, float, bool or None, not " + Py.typeName(k));
    };
  }

  private void newline(int depth) {
    if (indent != null) {
      out.append('\n').append(indent.repeat(depth));
    }
  }

  private void string(String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20 || (ensureAscii && c > 0x7e)) {
            out.append(String.format("\\u%04x", (int) c)); // a UTF-16 unit: non-BMP characters become pairs
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
