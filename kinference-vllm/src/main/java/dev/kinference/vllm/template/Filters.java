package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Builtins.Args;
import dev.kinference.vllm.template.Py.Undefined;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Jinja2's built-in filters, with transformers' {@code tojson}. */
final class Filters {

  static final Set<String> NAMES = Set.of("abs", "attr", "batch", "capitalize", "center", "count", "d", "default",
      "dictsort", "e", "escape", "first", "float", "format", "groupby", "indent", "int", "items", "join", "last",
      "length", "list", "lower", "map", "max", "min", "reject", "rejectattr", "replace", "reverse", "round", "safe",
      "select", "selectattr", "slice", "sort", "string", "sum", "title", "tojson", "trim", "truncate", "unique",
      "upper", "wordcount");

  static void require(String name, int line) {
    if (!NAMES.contains(name)) {
      throw TemplateException.fail("line " + line + ": no filter named '" + name + "' in this chat-template engine");
    }
  }

  private Filters() {}

  @SuppressWarnings("RefactorSwitch") // one case per filter, most of several statements: a statement switch reads best
  static @Nullable Object filter(Interpreter in, String name, @Nullable Object v, List<@Nullable Object> args,
      Map<String, @Nullable Object> kw) {
    Args a = new Args(name, args, kw);
    switch (name) {
      case "length", "count" -> {
        a.done();
        return (long) Py.length(v);
      }
      case "list" -> {
        a.done();
        return Py.iterate(v);
      }
      case "string" -> {
        a.done();
        return Py.str(v);
      }
      case "safe" -> {
        a.done();
        return v;
      }
      case "e", "escape" -> {
        a.done();
        return Py.str(v).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&#34;")
            .replace("'", "&#39;");
      }
      case "trim" -> {
        Object chars = a.get("chars", null);
        a.done();
        return Py.strip(Py.str(v), chars == null ? null : Py.str(chars), true, true);
      }
      case "upper" -> {
        a.done();
        return Py.str(v).toUpperCase(Locale.ROOT);
      }
      case "lower" -> {
        a.done();
        return Py.str(v).toLowerCase(Locale.ROOT);
      }
      case "capitalize" -> {
        a.done();
        return CaseMapping.capitalize(Py.str(v));
      }
      case "title" -> {
        a.done();
        return CaseMapping.titleFilter(Py.str(v));
      }
      case "default", "d" -> {
        Object dflt = a.get("default_value", "");
        boolean bool = Py.truthy(a.get("boolean", false));
        a.done();
        return v instanceof Undefined || (bool && !Py.truthy(v)) ? dflt : v;
      }
      case "first" -> {
        a.done();
        List<@Nullable Object> items = Py.iterate(v);
        return items.isEmpty() ? new Undefined("first of an empty sequence") : items.get(0);
      }
      case "last" -> {
        a.done();
        List<@Nullable Object> items = Py.iterate(v);
        return items.isEmpty() ? new Undefined("last of an empty sequence") : items.get(items.size() - 1);
      }
      case "join" -> {
        Object sep = a.get("d", "");
        Object attribute = a.get("attribute", null);
        a.done();
        StringBuilder sb = new StringBuilder();
        boolean first = true;
        for (Object item : Py.iterate(v)) {
          if (!first) {
            sb.append(Py.str(sep));
          }
          first = false;
          sb.append(Py.str(attribute == null ? item : in.getItemOrAttr(item, attribute)));
        }
        return sb.toString();
      }
      case "replace" -> {
        String old = Py.str(a.get("old", null));
        String replacement = Py.str(a.get("new", null));
        Object count = a.get("count", null);
        a.done();
        return Builtins.replace(Py.str(v), old, replacement, count == null ? -1 : Py.toLong(count));
      }
      case "int" -> {
        Object dflt = a.get("default", 0L);
        int base = (int) Py.toLong(a.get("base", 10L));
        a.done();
        return toInt(v, dflt, base);
      }
      case "float" -> {
        Object dflt = a.get("default", 0.0);
        a.done();
        if (Py.isNumber(v)) {
          return Py.toDouble(v);
        }
        Double parsed = Py.parseFloat(Py.str(v));
        return parsed == null ? dflt : parsed;
      }
      case "abs" -> {
        a.done();
        if (Py.isInt(v)) {
          return Py.normalize(Py.toBig(v).abs());
        }
        return Math.abs(Py.toDouble(v));
      }
      case "round" -> {
        long precision = Py.toLong(a.get("precision", 0L));
        String method = Py.str(a.get("method", "common"));
        a.done();
        if (method.equals("common")) {
          // Python's round(): half to even on the exact binary value; an int stays an int (rounded to tens and
          // more by a negative precision: round(15, -1) is 20)
          if (Py.isInt(v)) {
            return precision >= 0 ? v : Py.normalize(new java.math.BigDecimal(Py.toBig(v))
                .setScale((int) precision, java.math.RoundingMode.HALF_EVEN).toBigInteger());
          }
          return new java.math.BigDecimal(Py.toDouble(v))
              .setScale((int) precision, java.math.RoundingMode.HALF_EVEN).doubleValue();
        }
        double d = Py.toDouble(v);
        double f = Math.pow(10, (double) precision);
        return switch (method) {
          case "ceil" -> Math.ceil(d * f) / f;
          case "floor" -> Math.floor(d * f) / f;
          default -> throw TemplateException.fail("round: unknown method " + method);
        };
      }
      case "tojson" -> {
        // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
        boolean ensureAscii = Py.truthy(a.get("ensure_ascii", false));
        Object indent = a.get("indent", null);
        Object separators = a.get("separators", null);
        boolean sortKeys = Py.truthy(a.get("sort_keys", false));
        a.done();
        return PyJson.dumps(v, ensureAscii, indent, separators, sortKeys);
      }
      case "groupby" -> {
        Object attribute = a.get("attribute", null);
        Object dflt = a.get("default", null);
        boolean caseSensitive = Py.truthy(a.get("case_sensitive", false));
        a.done();
        return groupBy(in, v, attribute, dflt, caseSensitive);
      }
      case "center" -> {
        long width = Py.toLong(a.get("width", 80L));
        a.done();
        return java.util.Objects.requireNonNull(Builtins.method(Py.str(v), "center")).call(List.of(width), Map.of());
      }
      case "slice" -> {
        long slices = Py.toLong(a.get("slices", null));
        Object fill = a.get("fill_with", null);
        a.done();
        return slice(v, slices, fill);
      }
      case "batch" -> {
        long size = Py.toLong(a.get("linecount", null));
        Object fill = a.get("fill_with", null);
        a.done();
        return batch(v, size, fill);
      }
      case "truncate" -> {
        long length = Py.toLong(a.get("length", 255L));
        boolean killWords = Py.truthy(a.get("killwords", false));
        String end = Py.str(a.get("end", "..."));
        Object leeway = a.get("leeway", null);
        a.done();
        return truncate(Py.str(v), length, killWords, end, leeway == null ? 5 : Py.toLong(leeway));
      }
      case "format" -> {
        List<@Nullable Object> values = a.positional();
        if (!a.remainingKeywords().isEmpty()) {
          throw TemplateException.fail("format: keyword arguments are not supported by this chat-template engine");
        }
        return PercentFormat.format(Py.str(v), values);
      }
      case "items" -> {
        a.done();
        if (v instanceof Undefined) {
          return new ArrayList<>();
        }
        if (!(v instanceof Map<?, ?> m)) {
          throw TemplateException.fail("items: expected a mapping, got " + Py.typeName(v));
        }
        List<@Nullable Object> out = new ArrayList<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
          out.add(Builtins.pair(e.getKey(), e.getValue()));
        }
        return out;
      }
      case "dictsort" -> {
        boolean caseSensitive = Py.truthy(a.get("case_sensitive", false));
        String by = Py.str(a.get("by", "key"));
        boolean reverse = Py.truthy(a.get("reverse", false));
        a.done();
        if (!(v instanceof Map<?, ?> m)) {
          throw TemplateException.fail("dictsort: expected a mapping, got " + Py.typeName(v));
        }
        List<@Nullable Object> out = new ArrayList<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
          out.add(Builtins.pair(e.getKey(), e.getValue()));
        }
        int index = by.equals("value") ? 1 : 0;
        Comparator<@Nullable Object> c = (x, y) -> Py.compare(sortKey(((List<?>) x).get(index), caseSensitive),
            sortKey(((List<?>) y).get(index), caseSensitive));
        out.sort(reverse ? c.reversed() : c);
        return out;
      }
      case "sort" -> {
        boolean reverse = Py.truthy(a.get("reverse", false));
        boolean caseSensitive = Py.truthy(a.get("case_sensitive", false));
        Object attribute = a.get("attribute", null);
        a.done();
        List<@Nullable Object> out = Py.iterate(v);
        Comparator<@Nullable Object> c = (x, y) -> Py.compare(
            sortKey(attribute == null ? x : in.getItemOrAttr(x, attribute), caseSensitive),
            sortKey(attribute == null ? y : in.getItemOrAttr(y, attribute), caseSensitive));
        out.sort(reverse ? c.reversed() : c);
        return out;
      }
      case "reverse" -> {
        a.done();
        if (v instanceof String s) {
          return new StringBuilder(s).reverse().toString();
        }
        List<@Nullable Object> out = Py.iterate(v);
        java.util.Collections.reverse(out);
        return out;
      }
      case "unique" -> {
        boolean caseSensitive = Py.truthy(a.get("case_sensitive", false));
        Object attribute = a.get("attribute", null);
        a.done();
        List<@Nullable Object> out = new ArrayList<>();
        List<@Nullable Object> seen = new ArrayList<>();
        for (Object item : Py.iterate(v)) {
          Object key = sortKey(attribute == null ? item : in.getItemOrAttr(item, attribute), caseSensitive);
          if (seen.stream().noneMatch(s -> Py.equal(s, key))) {
            seen.add(key);
            out.add(item);
          }
        }
        return out;
      }
      case "sum" -> {
        Object attribute = a.get("attribute", null);
        Object start = a.get("start", 0L);
        a.done();
        Object total = start;
        for (Object item : Py.iterate(v)) {
          total = Operators.arithmetic("+", total, attribute == null ? item : in.getItemOrAttr(item, attribute));
        }
        return total;
      }
      case "min", "max" -> {
        boolean caseSensitive = Py.truthy(a.get("case_sensitive", false));
        Object attribute = a.get("attribute", null);
        a.done();
        Object best = null;
        boolean any = false;
        for (Object item : Py.iterate(v)) {
          Object k = sortKey(attribute == null ? item : in.getItemOrAttr(item, attribute), caseSensitive);
          Object bk = any ? sortKey(attribute == null ? best : in.getItemOrAttr(best, attribute), caseSensitive) : null;
          if (!any || (name.equals("min") ? Py.compare(k, bk) < 0 : Py.compare(k, bk) > 0)) {
            best = item;
            any = true;
          }
        }
        return any ? best : new Undefined("no items");
      }
      case "attr" -> {
        Object attribute = a.get("name", null);
        a.done();
        // an attribute only, never an item: attr('a') of {'a': 1} is undefined in Jinja2
        return v instanceof java.util.Map<?, ?> && Builtins.method(v, Py.str(attribute)) == null
            ? new Undefined("dict object has no attribute '" + Py.str(attribute) + "'")
            : in.getAttr(v, Py.str(attribute));
      }
      case "indent" -> {
        Object width = a.get("width", 4L);
        boolean first = Py.truthy(a.get("first", false));
        boolean blank = Py.truthy(a.get("blank", false));
        a.done();
        String pad = width instanceof String s ? s : " ".repeat((int) Py.toLong(width));
        String text = Py.str(v);
        StringBuilder sb = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
          if (i > 0) {
            sb.append('\n');
          }
          boolean indentIt = (i > 0 || first) && (blank || !lines[i].isEmpty());
          if (indentIt) {
            sb.append(pad);
          }
          sb.append(lines[i]);
        }
        return sb.toString();
      }
      case "wordcount" -> {
        a.done();
        String s = Py.str(v).strip();
        return s.isEmpty() ? 0L : (long) s.split("\\s+").length;
      }
      case "map" -> {
        if (!Py.truthy(v)) {
          return new ArrayList<@Nullable Object>(); // Jinja2 iterates only a truthy value: None yields nothing
        }
        Object attribute = a.getOptional("attribute");
        Object dflt = a.getOptional("default");
        List<@Nullable Object> out = new ArrayList<>();
        if (attribute != null) {
          a.done();
          for (Object item : Py.iterate(v)) {
            Object x = in.getItemOrAttr(item, attribute);
            out.add(x instanceof Undefined && dflt != null ? dflt : x);
          }
          return out;
        }
        List<@Nullable Object> rest = a.positional();
        if (rest.isEmpty()) {
          throw TemplateException.fail("map needs a filter name or attribute=");
        }
        String filterName = Py.str(rest.get(0));
        require(filterName, 0);
        List<@Nullable Object> filterArgs = rest.subList(1, rest.size());
        for (Object item : Py.iterate(v)) {
          out.add(filter(in, filterName, item, new ArrayList<>(filterArgs), a.remainingKeywords()));
        }
        return out;
      }
      case "select", "reject" -> {
        if (!Py.truthy(v)) {
          return new ArrayList<@Nullable Object>(); // Jinja2 iterates only a truthy value: None yields nothing
        }
        List<@Nullable Object> rest = a.positional();
        a.requireNoKeywords();
        boolean keep = name.equals("select");
        List<@Nullable Object> out = new ArrayList<>();
        for (Object item : Py.iterate(v)) {
          boolean ok = rest.isEmpty() ? Py.truthy(item)
              : Builtins.test(requireTestName(rest.get(0)), item, rest.subList(1, rest.size()));
          if (ok == keep) {
            out.add(item);
          }
        }
        return out;
      }
      case "selectattr", "rejectattr" -> {
        if (!Py.truthy(v)) {
          return new ArrayList<@Nullable Object>(); // Jinja2 iterates only a truthy value: None yields nothing
        }
        List<@Nullable Object> rest = a.positional();
        a.requireNoKeywords();
        if (rest.isEmpty()) {
          throw TemplateException.fail(name + " needs an attribute name");
        }
        Object attribute = rest.get(0);
        boolean keep = name.equals("selectattr");
        List<@Nullable Object> out = new ArrayList<>();
        for (Object item : Py.iterate(v)) {
          Object x = in.getItemOrAttr(item, attribute);
          boolean ok = rest.size() == 1 ? Py.truthy(x)
              : Builtins.test(requireTestName(rest.get(1)), x, rest.subList(2, rest.size()));
          if (ok == keep) {
            out.add(item);
          }
        }
        return out;
      }
      default -> throw TemplateException.fail("no filter named '" + name + "'");
    }
  }

  private static String requireTestName(@Nullable Object name) {
    String n = Py.str(name);
    Builtins.requireTest(n, 0);
    return n;
  }

  private static @Nullable Object sortKey(@Nullable Object v, boolean caseSensitive) {
    return !caseSensitive && v instanceof String s ? s.toLowerCase(Locale.ROOT) : v;
  }


  /**
   * Jinja2's {@code groupby}: the items sorted by the attribute, grouped into {@code (grouper, list)} named tuples;
   * without {@code case_sensitive} strings group ignoring case and the grouper is the first item's value.
   */
  private static List<@Nullable Object> groupBy(Interpreter in, @Nullable Object v, @Nullable Object attribute,
      @Nullable Object dflt, boolean caseSensitive) {
    if (attribute == null) {
      throw TemplateException.fail("groupby needs an attribute");
    }
    List<@Nullable Object> items = Py.iterate(v);
    java.util.function.Function<@Nullable Object, @Nullable Object> value = item -> {
      Object x = in.getItemOrAttr(item, attribute);
      return x instanceof Undefined && dflt != null ? dflt : x;
    };
    items.sort((x, y) -> Py.compare(sortKey(value.apply(x), caseSensitive), sortKey(value.apply(y), caseSensitive)));
    List<@Nullable Object> out = new ArrayList<>();
    List<@Nullable Object> group = new ArrayList<>();
    Object key = null;
    for (Object item : items) {
      Object k = sortKey(value.apply(item), caseSensitive);
      if (!group.isEmpty() && !Py.equal(k, key)) {
        out.add(new Py.Tuple(java.util.Arrays.asList(value.apply(group.get(0)), group), List.of("grouper", "list")));
        group = new ArrayList<>();
      }
      key = k;
      group.add(item);
    }
    if (!group.isEmpty()) {
      out.add(new Py.Tuple(java.util.Arrays.asList(value.apply(group.get(0)), group), List.of("grouper", "list")));
    }
    return out;
  }

  /** Jinja2's {@code slice}: {@code n} columns, the first ones one longer; shorter ones padded with {@code fill}. */
  private static List<@Nullable Object> slice(@Nullable Object v, long n, @Nullable Object fill) {
    if (n <= 0) {
      throw TemplateException.fail("slice: slices must be positive, got " + n);
    }
    List<@Nullable Object> items = Py.iterate(v);
    int perSlice = (int) (items.size() / n);
    int withExtra = (int) (items.size() % n);
    List<@Nullable Object> out = new ArrayList<>();
    int offset = 0;
    for (int i = 0; i < n; i++) {
      int start = offset + i * perSlice;
      if (i < withExtra) {
        offset++;
      }
      int end = offset + (i + 1) * perSlice;
      List<@Nullable Object> column = new ArrayList<>(items.subList(start, end));
      if (fill != null && i >= withExtra) {
        column.add(fill);
      }
      out.add(column);
    }
    return out;
  }

  /** Jinja2's {@code batch}: lists of {@code size} items, the last one padded with {@code fill} if given. */
  private static List<@Nullable Object> batch(@Nullable Object v, long size, @Nullable Object fill) {
    if (size <= 0) {
      throw TemplateException.fail("batch: linecount must be positive, got " + size);
    }
    List<@Nullable Object> out = new ArrayList<>();
    List<@Nullable Object> current = new ArrayList<>();
    for (Object item : Py.iterate(v)) {
      current.add(item);
      if (current.size() == size) {
        out.add(current);
        current = new ArrayList<>();
      }
    }
    if (!current.isEmpty()) {
      while (fill != null && current.size() < size) {
        current.add(fill);
      }
      out.add(current);
    }
    return out;
  }

  /** Jinja2's {@code truncate}: strings up to {@code length + leeway} stay whole; longer ones end in {@code end}. */
  static String truncate(String s, long length, boolean killWords, String end, long leeway) {
    int endLength = end.codePointCount(0, end.length());
    if (length < endLength || leeway < 0) {
      throw TemplateException.fail("truncate: expected length >= " + endLength + " and leeway >= 0");
    }
    int[] cps = s.codePoints().toArray();
    if (cps.length <= length + leeway) {
      return s;
    }
    String head = new String(cps, 0, (int) (length - endLength));
    if (killWords) {
      return head + end;
    }
    int space = head.lastIndexOf(' ');
    return (space >= 0 ? head.substring(0, space) : head) + end;
  }

  /** Jinja2's {@code int} filter: Python's {@code int(s, base)}, else {@code int(float(v))}, else the default. */
  private static @Nullable Object toInt(@Nullable Object v, @Nullable Object dflt, int base) {
    if (Py.isInt(v)) {
      return Py.normalize(Py.toBig(v));
    }
    if (v instanceof Double d) {
      return Double.isFinite(d) ? Py.normalize(new java.math.BigDecimal(d).toBigInteger()) : dflt;
    }
    String s = Py.str(v).strip().replace("_", "");
    String digits = s.startsWith("-") || s.startsWith("+") ? s.substring(1) : s;
    String prefix = digits.length() > 1 ? digits.substring(0, 2).toLowerCase(java.util.Locale.ROOT) : "";
    if ((base == 16 && prefix.equals("0x")) || (base == 8 && prefix.equals("0o"))
        || (base == 2 && prefix.equals("0b"))) {
      digits = digits.substring(2);
    }
    try {
      java.math.BigInteger b = new java.math.BigInteger(digits, base);
      return Py.normalize(s.startsWith("-") ? b.negate() : b);
    } catch (NumberFormatException | ArithmeticException e) {
      Double d = Py.parseFloat(Py.str(v));
      return d != null && Double.isFinite(d) ? Py.normalize(new java.math.BigDecimal(d).toBigInteger()) : dflt;
    }
  }
}
