package dev.kinference.vllm.template;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Python's value semantics, as Jinja2 gives them to templates: None is {@code null}, bool {@link Boolean}, int
 * {@link Long}, float {@link Double}, str {@link String}, list and tuple {@link List}, dict {@link Map} (insertion
 * order). {@link Undefined} is Jinja2's default undefined value.
 */
final class Py {

  private Py() {}

  /** Jinja2's default {@code Undefined}: empty when printed or iterated, false, an error for most operations. */
  static final class Undefined {
    final String hint;

    Undefined(String hint) {
      this.hint = hint;
    }

    @Override
    public String toString() {
      return "";
    }
  }

  /** A {@code namespace(...)} object: attributes settable from inside loops. */
  static final class Namespace {
    final Map<String, @Nullable Object> attributes = new LinkedHashMap<>();
  }

  /** Something callable from a template: a global, a macro, a bound method. */
  @FunctionalInterface
  interface Callable {
    @Nullable Object call(List<@Nullable Object> args, Map<String, @Nullable Object> kwargs);
  }

  static boolean isUndefined(@Nullable Object v) {
    return v instanceof Undefined;
  }

  static boolean truthy(@Nullable Object v) {
    if (v == null || v instanceof Undefined) {
      return false;
    }
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof Long l) {
      return l != 0;
    }
    if (v instanceof Double d) {
      return d != 0;
    }
    if (v instanceof String s) {
      return !s.isEmpty();
    }
    if (v instanceof Collection<?> c) {
      return !c.isEmpty();
    }
    if (v instanceof Map<?, ?> m) {
      return !m.isEmpty();
    }
    return true;
  }

  /** {@code str(v)}; undefined prints as nothing. */
  static String str(@Nullable Object v) {
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof Undefined) {
      return "";
    }
    return repr(v);
  }

  /** {@code repr(v)}. */
  static String repr(@Nullable Object v) {
    if (v == null) {
      return "None";
    }
    if (v instanceof Boolean b) {
      return b ? "True" : "False";
    }
    if (v instanceof Long l) {
      return l.toString();
    }
    if (v instanceof Double d) {
      return floatRepr(d);
    }
    if (v instanceof String s) {
      return stringRepr(s);
    }
    if (v instanceof Undefined) {
      return "";
    }
    if (v instanceof List<?> list) {
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        sb.append(repr(list.get(i)));
      }
      return sb.append(']').toString();
    }
    if (v instanceof Map<?, ?> map) {
      StringBuilder sb = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        sb.append(repr(e.getKey())).append(": ").append(repr(e.getValue()));
      }
      return sb.append('}').toString();
    }
    if (v instanceof Namespace ns) {
      return "<Namespace " + repr(ns.attributes) + ">";
    }
    throw TemplateException.fail("cannot print a " + typeName(v));
  }

  static String stringRepr(String s) {
    char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder sb = new StringBuilder(s.length() + 2).append(quote);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c == quote) {
            sb.append('\\').append(c);
          } else if (c < 0x20 || c == 0x7f) {
            sb.append(String.format("\\x%02x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append(quote).toString();
  }

  /** Python's {@code repr(float)}: the shortest round-tripping digits, scientific below 1e-4 and from 1e16. */
  static String floatRepr(double d) {
    if (Double.isNaN(d)) {
      return "nan";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == 0) {
      return (1 / d) < 0 ? "-0.0" : "0.0";
    }
    BigDecimal exact = new BigDecimal(Double.toString(d)).stripTrailingZeros();
    String digits = exact.unscaledValue().abs().toString();
    int exponent = digits.length() - 1 - exact.scale(); // d = 0.digits * 10^(exponent+1)
    String sign = d < 0 ? "-" : "";
    if (exponent < -4 || exponent >= 16) {
      String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
      String exp = String.format("%s%02d", exponent < 0 ? "-" : "+", Math.abs(exponent));
      return sign + mantissa + "e" + exp;
    }
    if (exponent < 0) {
      return sign + "0." + "0".repeat(-exponent - 1) + digits;
    }
    if (digits.length() <= exponent + 1) {
      return sign + digits + "0".repeat(exponent + 1 - digits.length()) + ".0";
    }
    return sign + digits.substring(0, exponent + 1) + "." + digits.substring(exponent + 1);
  }

  static String typeName(@Nullable Object v) {
    if (v == null) {
      return "NoneType";
    }
    if (v instanceof Boolean) {
      return "bool";
    }
    if (v instanceof Long) {
      return "int";
    }
    if (v instanceof Double) {
      return "float";
    }
    if (v instanceof String) {
      return "str";
    }
    if (v instanceof List) {
      return "list";
    }
    if (v instanceof Map) {
      return "dict";
    }
    if (v instanceof Undefined u) {
      return "undefined value (" + u.hint + ")";
    }
    if (v instanceof Namespace) {
      return "namespace";
    }
    if (v instanceof Callable) {
      return "function";
    }
    return v.getClass().getSimpleName();
  }

  static boolean isNumber(@Nullable Object v) {
    return v instanceof Long || v instanceof Double || v instanceof Boolean;
  }

  static double toDouble(@Nullable Object v) {
    if (v instanceof Long l) {
      return l;
    }
    if (v instanceof Double d) {
      return d;
    }
    if (v instanceof Boolean b) {
      return b ? 1 : 0;
    }
    throw TemplateException.fail("expected a number, got " + typeName(v));
  }

  static long toLong(@Nullable Object v) {
    if (v instanceof Long l) {
      return l;
    }
    if (v instanceof Boolean b) {
      return b ? 1 : 0;
    }
    throw TemplateException.fail("expected an integer, got " + typeName(v));
  }

  /** Python {@code ==}. */
  @SuppressWarnings("ReferenceEquality") // identity is a fast path, value equality follows
  static boolean equal(@Nullable Object a, @Nullable Object b) {
    if (a == b) {
      return true;
    }
    if (a == null || b == null) {
      return false;
    }
    if (a instanceof Undefined || b instanceof Undefined) {
      return a instanceof Undefined && b instanceof Undefined;
    }
    if (isNumber(a) && isNumber(b)) {
      if ((a instanceof Long || a instanceof Boolean) && (b instanceof Long || b instanceof Boolean)) {
        return toLong(a) == toLong(b);
      }
      return toDouble(a) == toDouble(b);
    }
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      if (la.size() != lb.size()) {
        return false;
      }
      for (int i = 0; i < la.size(); i++) {
        if (!equal(la.get(i), lb.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      if (ma.size() != mb.size()) {
        return false;
      }
      for (Map.Entry<?, ?> e : ma.entrySet()) {
        if (!mb.containsKey(e.getKey()) || !equal(e.getValue(), mb.get(e.getKey()))) {
          return false;
        }
      }
      return true;
    }
    return Objects.equals(a, b);
  }

  /** Python ordering for {@code <} and friends, and for sorting. */
  static int compare(@Nullable Object a, @Nullable Object b) {
    if (isNumber(a) && isNumber(b)) {
      if ((a instanceof Long || a instanceof Boolean) && (b instanceof Long || b instanceof Boolean)) {
        return Long.compare(toLong(a), toLong(b));
      }
      return Double.compare(toDouble(a), toDouble(b));
    }
    if (a instanceof String sa && b instanceof String sb) {
      return compareStrings(sa, sb);
    }
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      for (int i = 0; i < Math.min(la.size(), lb.size()); i++) {
        if (!equal(la.get(i), lb.get(i))) {
          return compare(la.get(i), lb.get(i));
        }
      }
      return Integer.compare(la.size(), lb.size());
    }
    throw TemplateException.fail("cannot compare " + typeName(a) + " with " + typeName(b));
  }

  private static int compareStrings(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  /** The items a for loop or a filter walks: list elements, dict keys, string characters; undefined is empty. */
  static List<@Nullable Object> iterate(@Nullable Object v) {
    if (v instanceof List<?> list) {
      return new ArrayList<>(list);
    }
    if (v instanceof Map<?, ?> map) {
      return new ArrayList<>(map.keySet());
    }
    if (v instanceof String s) {
      List<@Nullable Object> chars = new ArrayList<>();
      s.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
      return chars;
    }
    if (v instanceof Undefined) {
      return new ArrayList<>();
    }
    throw TemplateException.fail(typeName(v) + " is not iterable");
  }

  static int length(@Nullable Object v) {
    if (v instanceof String s) {
      return s.codePointCount(0, s.length());
    }
    if (v instanceof Collection<?> c) {
      return c.size();
    }
    if (v instanceof Map<?, ?> m) {
      return m.size();
    }
    if (v instanceof Undefined) {
      return 0;
    }
    throw TemplateException.fail(typeName(v) + " has no length");
  }

  /** Python's {@code str.isspace()} for one character. */
  static boolean isSpace(int c) {
    return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == 0x85;
  }

  static String strip(String s, @Nullable String chars, boolean left, boolean right) {
    int start = 0;
    int end = s.length();
    if (left) {
      while (start < end && stripped(s.charAt(start), chars)) {
        start++;
      }
    }
    if (right) {
      while (end > start && stripped(s.charAt(end - 1), chars)) {
        end--;
      }
    }
    return s.substring(start, end);
  }

  private static boolean stripped(char c, @Nullable String chars) {
    return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
  }

  /** Python's {@code json.dumps(v, ensure_ascii=False, indent=indent)} (keys in order). */
  static String json(@Nullable Object v, @Nullable Integer indent) {
    StringBuilder sb = new StringBuilder();
    json(sb, v, indent, 0);
    return sb.toString();
  }

  private static void json(StringBuilder sb, @Nullable Object v, @Nullable Integer indent, int depth) {
    switch (v) {
      case null -> sb.append("null");
      case Boolean b -> sb.append(b ? "true" : "false");
      case Long l -> sb.append(l);
      case Double d -> {
        if (Double.isNaN(d)) {
          sb.append("NaN");
        } else if (Double.isInfinite(d)) {
          sb.append(d > 0 ? "Infinity" : "-Infinity");
        } else {
          sb.append(floatRepr(d));
        }
      }
      case String s -> jsonString(sb, s);
      case List<?> list -> {
        if (list.isEmpty()) {
          sb.append("[]");
          return;
        }
        sb.append('[');
        boolean first = true;
        for (Object item : list) {
          if (!first) {
            sb.append(indent == null ? ", " : ",");
          }
          first = false;
          newline(sb, indent, depth + 1);
          json(sb, item, indent, depth + 1);
        }
        newline(sb, indent, depth);
        sb.append(']');
      }
      case Map<?, ?> map -> {
        if (map.isEmpty()) {
          sb.append("{}");
          return;
        }
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : map.entrySet()) {
          if (!first) {
            sb.append(indent == null ? ", " : ",");
          }
          first = false;
          newline(sb, indent, depth + 1);
          Object key = e.getKey();
          jsonString(sb, key instanceof String s ? s : repr(key));
          sb.append(": ");
          json(sb, e.getValue(), indent, depth + 1);
        }
        newline(sb, indent, depth);
        sb.append('}');
      }
      case Namespace ns -> json(sb, ns.attributes, indent, depth);
      default -> throw TemplateException.fail("Object of type " + typeName(v) + " is not JSON serializable");
    }
  }

  private static void newline(StringBuilder sb, @Nullable Integer indent, int depth) {
    if (indent != null) {
      sb.append('\n').append(" ".repeat(indent * depth));
    }
  }

  private static void jsonString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
