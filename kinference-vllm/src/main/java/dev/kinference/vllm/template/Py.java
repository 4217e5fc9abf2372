package dev.kinference.vllm.template;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Python's value semantics, as Jinja2 gives them to templates: None is {@code null}, bool {@link Boolean}, int
 * {@link Long} or, from 2^63 on, {@link BigInteger}, float {@link Double}, str {@link String}, list {@link List},
 * tuple {@link Tuple}, dict {@link Map} (insertion order). {@link Undefined} is Jinja2's default undefined value.
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

  /**
   * A Python tuple: an immutable list that prints as {@code (a, b)}; a named tuple (groupby's) also answers its
   * field names as attributes.
   */
  static final class Tuple extends AbstractList<@Nullable Object> {
    private final List<@Nullable Object> items;
    private final List<String> fields;

    Tuple(List<? extends @Nullable Object> items) {
      this(items, List.of());
    }

    Tuple(List<? extends @Nullable Object> items, List<String> fields) {
      this.items = java.util.Collections.unmodifiableList(new ArrayList<@Nullable Object>(items));
      this.fields = fields;
    }

    @Override
    public @Nullable Object get(int index) {
      return items.get(index);
    }

    @Override
    public int size() {
      return items.size();
    }

    /** The named field {@code name}, or undefined. */
    @Nullable Object field(String name) {
      int i = fields.indexOf(name);
      return i >= 0 ? items.get(i) : new Undefined("tuple has no attribute '" + name + "'");
    }

    boolean hasField(String name) {
      return fields.contains(name);
    }
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
    if (v instanceof BigInteger b) {
      return b.signum() != 0;
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
    if (v instanceof Long || v instanceof BigInteger) {
      return v.toString();
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
    if (v instanceof Tuple t) {
      StringBuilder sb = new StringBuilder("(");
      for (int i = 0; i < t.size(); i++) {
        sb.append(i > 0 ? ", " : "").append(repr(t.get(i)));
      }
      return sb.append(t.size() == 1 ? ",)" : ")").toString();
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

  private static final java.util.regex.Pattern FLOAT_LITERAL = java.util.regex.Pattern.compile(
      "[+-]?(?:\\d(?:_?\\d)*(?:\\.(?:\\d(?:_?\\d)*)?)?|\\.\\d(?:_?\\d)*)(?:[eE][+-]?\\d(?:_?\\d)*)?");
  private static final java.util.regex.Pattern FLOAT_SPECIAL =
      java.util.regex.Pattern.compile("([+-]?)(inf|infinity|nan)", java.util.regex.Pattern.CASE_INSENSITIVE);

  /**
   * Python's {@code float(s)}: surrounding whitespace, a sign, digits with single underscores between them, a
   * fraction, an exponent, or inf, infinity and nan in any case; null for anything else (Java's "1d" and hex floats).
   */
  static @Nullable Double parseFloat(String text) {
    String s = strip(text, null, true, true);
    if (FLOAT_LITERAL.matcher(s).matches()) {
      return Double.parseDouble(s.replace("_", ""));
    }
    java.util.regex.Matcher special = FLOAT_SPECIAL.matcher(s);
    if (special.matches()) {
      boolean negative = special.group(1).equals("-");
      return special.group(2).equalsIgnoreCase("nan") ? Double.NaN
          : negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    return null;
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
    if (exact.precision() == 2) {
      // Java writes at least two digits (4.9E-324) where one round-trips too; Python writes the one (5e-324)
      BigDecimal one = exact.round(new java.math.MathContext(1, java.math.RoundingMode.HALF_EVEN));
      if (one.doubleValue() == d) {
        exact = one.stripTrailingZeros();
      }
    }
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
    if (v instanceof Long || v instanceof BigInteger) {
      return "int";
    }
    if (v instanceof Double) {
      return "float";
    }
    if (v instanceof String) {
      return "str";
    }
    if (v instanceof Tuple) {
      return "tuple";
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
    return isInt(v) || v instanceof Double;
  }

  /** A Python int: bool, {@link Long} or {@link BigInteger}. */
  static boolean isInt(@Nullable Object v) {
    return v instanceof Long || v instanceof Boolean || v instanceof BigInteger;
  }

  static BigInteger toBig(@Nullable Object v) {
    return v instanceof BigInteger b ? b : BigInteger.valueOf(toLong(v));
  }

  /** An int result: a {@link Long} when it fits, as every int below 2^63 is represented. */
  static Object normalize(BigInteger b) {
    return b.bitLength() < 64 ? (Object) b.longValue() : b;
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
    if (v instanceof BigInteger b) {
      return b.doubleValue();
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
    if (v instanceof BigInteger b) {
      throw TemplateException.fail("int too large to use here: " + b);
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
      if (a instanceof Long x && b instanceof Long y) {
        return x.longValue() == y.longValue();
      }
      if (isInt(a) && isInt(b)) {
        return toBig(a).equals(toBig(b));
      }
      return toDouble(a) == toDouble(b);
    }
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      if (la.size() != lb.size() || (a instanceof Tuple) != (b instanceof Tuple)) {
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
      if (a instanceof Long x && b instanceof Long y) {
        return Long.compare(x, y);
      }
      if (isInt(a) && isInt(b)) {
        return toBig(a).compareTo(toBig(b));
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
}
