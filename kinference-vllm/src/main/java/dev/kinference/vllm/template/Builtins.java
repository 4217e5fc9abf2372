package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Py.Undefined;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** Jinja2's built-in filters and tests, the globals Hugging Face adds, and Python's str/dict/list methods. */
final class Builtins {

  static final Set<String> TESTS = Set.of("boolean", "callable", "defined", "divisibleby", "eq", "equalto", "==",
      "even", "false", "float", "ge", ">=", "gt", "greaterthan", ">", "in", "integer", "iterable", "le", "<=",
      "lower", "lt", "lessthan", "<", "mapping", "ne", "!=", "none", "number", "odd", "sameas", "sequence",
      "string", "true", "undefined", "upper");

  private Builtins() {}

  static void requireTest(String name, int line) {
    if (!TESTS.contains(name)) {
      throw TemplateException.fail("line " + line + ": no test named '" + name + "' in this chat-template engine");
    }
  }

  // ---- tests ----

  static boolean test(String name, @Nullable Object v, List<@Nullable Object> args) {
    return switch (name) {
      case "defined" -> !(v instanceof Undefined);
      case "undefined" -> v instanceof Undefined;
      case "none" -> v == null;
      case "boolean" -> v instanceof Boolean;
      case "true" -> Boolean.TRUE.equals(v);
      case "false" -> Boolean.FALSE.equals(v);
      case "integer" -> v instanceof Long || v instanceof java.math.BigInteger;
      case "float" -> v instanceof Double;
      case "number" -> Py.isNumber(v);
      case "string" -> v instanceof String;
      case "mapping" -> v instanceof Map || v instanceof Py.Namespace;
      // Jinja2's Undefined iterates as empty and has a length of 0, so it passes both tests (Hermes' and
      // Granite's json_to_python_type turn a schema without "type" into "Union[]" through this).
      case "iterable", "sequence" -> v instanceof List || v instanceof Map || v instanceof String
          || v instanceof Undefined;
      case "callable" -> v instanceof Py.Callable;
      case "lower" -> v instanceof String s && s.equals(s.toLowerCase(Locale.ROOT));
      case "upper" -> v instanceof String s && s.equals(s.toUpperCase(Locale.ROOT));
      case "even" -> !Py.toBig(v).testBit(0);
      case "odd" -> Py.toBig(v).testBit(0);
      case "divisibleby" -> Py.toBig(v).mod(Py.toBig(arg(args, 0, name)).abs()).signum() == 0;
      case "eq", "equalto", "==" -> Py.equal(v, arg(args, 0, name));
      case "ne", "!=" -> !Py.equal(v, arg(args, 0, name));
      case "lt", "lessthan", "<" -> Py.compare(v, arg(args, 0, name)) < 0;
      case "le", "<=" -> Py.compare(v, arg(args, 0, name)) <= 0;
      case "gt", "greaterthan", ">" -> Py.compare(v, arg(args, 0, name)) > 0;
      case "ge", ">=" -> Py.compare(v, arg(args, 0, name)) >= 0;
      case "sameas" -> sameAs(v, arg(args, 0, name));
      case "in" -> Operators.contains(arg(args, 0, name), v);
      default -> throw TemplateException.fail("no test named '" + name + "'");
    };
  }

  /** Python's {@code is}: None, booleans and the same object. */
  @SuppressWarnings("ReferenceEquality") // identity is what 'sameas' tests
  private static boolean sameAs(@Nullable Object v, @Nullable Object o) {
    return v == o || (v instanceof Boolean && v.equals(o));
  }

  private static @Nullable Object arg(List<@Nullable Object> args, int i, String what) {
    if (args.size() <= i) {
      throw TemplateException.fail("'" + what + "' needs an argument");
    }
    return args.get(i);
  }

  static List<@Nullable Object> pair(@Nullable Object a, @Nullable Object b) {
    List<@Nullable Object> p = new ArrayList<>(2);
    p.add(a);
    p.add(b);
    return new Py.Tuple(p);
  }

  static String replace(String s, String old, String replacement, long count) {
    if (count < 0) {
      if (old.isEmpty()) {
        StringBuilder sb = new StringBuilder(replacement);
        for (int i = 0; i < s.length(); i++) {
          sb.append(s.charAt(i)).append(replacement);
        }
        return sb.toString();
      }
      return s.replace(old, replacement);
    }
    StringBuilder sb = new StringBuilder();
    int from = 0;
    long done = 0;
    while (done < count) {
      int at = s.indexOf(old, from);
      if (at < 0 || old.isEmpty()) {
        break;
      }
      sb.append(s, from, at).append(replacement);
      from = at + old.length();
      done++;
    }
    return sb.append(s.substring(from)).toString();
  }

  // ---- methods of str, dict and list ----

  private static long codePointIndex(String s, int utf16Index) {
    return utf16Index < 0 ? utf16Index : s.codePointCount(0, utf16Index);
  }

  static Py.@Nullable Callable method(@Nullable Object self, String name) {
    if (self instanceof String s) {
      return switch (name) {
        case "strip", "lstrip", "rstrip" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object chars = a.get("chars", null);
          a.done();
          return Py.strip(s, chars == null ? null : Py.str(chars), !name.equals("rstrip"), !name.equals("lstrip"));
        };
        case "upper" -> noArgs(name, () -> s.toUpperCase(Locale.ROOT));
        case "lower" -> noArgs(name, () -> s.toLowerCase(Locale.ROOT));
        case "title" -> noArgs(name, () -> CaseMapping.title(s));
        case "swapcase" -> noArgs(name, () -> CaseMapping.swapCase(s));
        case "casefold" -> noArgs(name, () -> CaseMapping.caseFold(s));
        case "capitalize" -> noArgs(name, () -> CaseMapping.capitalize(s));
        case "isdigit" -> noArgs(name, () -> !s.isEmpty() && s.chars().allMatch(Character::isDigit));
        case "isalnum" -> noArgs(name, () -> !s.isEmpty() && s.codePoints().allMatch(Character::isLetterOrDigit));
        case "isupper", "islower" -> noArgs(name, () -> {
          boolean cased = s.codePoints().anyMatch(c -> Character.isUpperCase(c) || Character.isLowerCase(c));
          return cased && s.equals(name.equals("isupper") ? s.toUpperCase(Locale.ROOT) : s.toLowerCase(Locale.ROOT));
        });
        case "removeprefix", "removesuffix" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          String affix = Py.str(a.get("prefix", null));
          a.done();
          if (name.equals("removeprefix")) {
            return s.startsWith(affix) ? s.substring(affix.length()) : s;
          }
          return s.endsWith(affix) && !affix.isEmpty() ? s.substring(0, s.length() - affix.length()) : s;
        };
        case "partition", "rpartition" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          String sep = Py.str(a.get("sep", null));
          a.done();
          int at = name.equals("partition") ? s.indexOf(sep) : s.lastIndexOf(sep);
          if (at < 0) {
            return name.equals("partition") ? new Py.Tuple(List.of(s, "", "")) : new Py.Tuple(List.of("", "", s));
          }
          return new Py.Tuple(List.of(s.substring(0, at), sep, s.substring(at + sep.length())));
        };
        case "center", "ljust", "rjust", "zfill" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          int width = (int) Py.toLong(a.get("width", null));
          String fill = name.equals("zfill") ? "0" : Py.str(a.get("fillchar", " "));
          a.done();
          return pad(name, s, width, fill);
        };
        case "format" -> (args, kw) -> StrFormat.format(s, args, kw);
        case "isalpha" -> noArgs(name, () -> !s.isEmpty() && s.chars().allMatch(Character::isLetter));
        case "isspace" -> noArgs(name, () -> !s.isEmpty() && s.chars().allMatch(Py::isSpace));
        case "startswith", "endswith" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object prefix = a.get("prefix", null);
          Object start = a.get("start", null);
          Object end = a.get("end", null);
          a.done();
          String within = start == null && end == null ? s : Py.str(Interpreter.slice(s, start, end, null));
          List<@Nullable Object> options = prefix instanceof List<?> l ? new ArrayList<>(l) : List.of(Py.str(prefix));
          for (Object o : options) {
            if (name.equals("startswith") ? within.startsWith(Py.str(o)) : within.endsWith(Py.str(o))) {
              return true;
            }
          }
          return false;
        };
        case "split", "rsplit" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object sep = a.get("sep", null);
          long max = Py.toLong(a.get("maxsplit", -1L));
          a.done();
          return split(s, sep == null ? null : Py.str(sep), max, name.equals("rsplit"));
        };
        case "splitlines" -> noArgs(name, () -> {
          List<@Nullable Object> out = new ArrayList<>(List.of(s.split("\r\n|\n|\r", -1)));
          if (!out.isEmpty() && "".equals(out.get(out.size() - 1))) {
            out.remove(out.size() - 1);
          }
          return out;
        });
        case "replace" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          String old = Py.str(a.get("old", null));
          String replacement = Py.str(a.get("new", null));
          long count = Py.toLong(a.get("count", -1L));
          a.done();
          return replace(s, old, replacement, count);
        };
        case "find", "rfind", "index", "count" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          String sub = Py.str(a.get("sub", null));
          a.done();
          // Python counts code points, Java UTF-16 units: they differ after a character outside the BMP (emoji)
          return switch (name) {
            case "find" -> codePointIndex(s, s.indexOf(sub));
            case "rfind" -> codePointIndex(s, s.lastIndexOf(sub));
            case "index" -> {
              int i = s.indexOf(sub);
              if (i < 0) {
                throw TemplateException.fail("substring not found");
              }
              yield codePointIndex(s, i);
            }
            default -> sub.isEmpty() ? (long) s.codePointCount(0, s.length()) + 1
                : (long) (s.split(java.util.regex.Pattern.quote(sub), -1).length - 1);
          };
        };
        case "join" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object items = a.get("iterable", null);
          a.done();
          StringBuilder sb = new StringBuilder();
          boolean first = true;
          for (Object item : Py.iterate(items)) {
            if (!(item instanceof String str)) {
              throw TemplateException.fail("join: expected str items, got " + Py.typeName(item));
            }
            if (!first) {
              sb.append(s);
            }
            first = false;
            sb.append(str);
          }
          return sb.toString();
        };
        default -> null;
      };
    }
    if (self instanceof Map<?, ?> m) {
      return switch (name) {
        case "items" -> noArgs(name, () -> {
          List<@Nullable Object> out = new ArrayList<>();
          m.forEach((k, v) -> out.add(pair(k, v)));
          return out;
        });
        case "keys" -> noArgs(name, () -> new ArrayList<@Nullable Object>(m.keySet()));
        case "copy" -> noArgs(name, () -> new LinkedHashMap<Object, @Nullable Object>(m));
        case "values" -> noArgs(name, () -> new ArrayList<@Nullable Object>(m.values()));
        case "get" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object key = a.get("key", null);
          Object dflt = a.get("default", null);
          a.done();
          return m.containsKey(key) ? m.get(key) : dflt;
        };
        default -> null;
      };
    }
    if (self instanceof List<?> l) {
      return switch (name) {
        case "index" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object x = a.get("value", null);
          a.done();
          for (int i = 0; i < l.size(); i++) {
            if (Py.equal(l.get(i), x)) {
              return (long) i;
            }
          }
          throw TemplateException.fail("value is not in list");
        };
        case "count" -> (args, kw) -> {
          Args a = new Args(name, args, kw);
          Object x = a.get("value", null);
          a.done();
          return l.stream().filter(e -> Py.equal(e, x)).count();
        };
        default -> null;
      };
    }
    return null;
  }

  /** Python's str methods that widen a string to {@code width} with {@code padding}; zfill keeps a sign in front. */
  private static String pad(String method, String s, int width, String padding) {
    int missing = width - s.codePointCount(0, s.length());
    if (missing <= 0) {
      return s;
    }
    return switch (method) {
      case "ljust" -> s + padding.repeat(missing);
      case "rjust" -> padding.repeat(missing) + s;
      case "zfill" -> s.startsWith("-") || s.startsWith("+") ? s.charAt(0) + "0".repeat(missing) + s.substring(1)
          : "0".repeat(missing) + s;
      default -> {
        int left = missing / 2 + (missing & width & 1); // Python's centring rule
        yield padding.repeat(left) + s + padding.repeat(missing - left);
      }
    };
  }

  private static Py.Callable noArgs(String name, Supplier<@Nullable Object> body) {
    return (args, kw) -> {
      new Args(name, args, kw).done();
      return body.get();
    };
  }

  static List<@Nullable Object> split(String s, @Nullable String sep, long max, boolean fromRight) {
    List<@Nullable Object> out = new ArrayList<>();
    if (sep == null) {
      return fromRight ? rsplitWhitespace(s, max) : splitWhitespace(s, max);
    }
    if (sep.isEmpty()) {
      throw TemplateException.fail("empty separator");
    }
    List<String> parts = new ArrayList<>(List.of(s.split(java.util.regex.Pattern.quote(sep), -1)));
    if (max >= 0 && parts.size() > max + 1) {
      if (fromRight) {
        int keep = parts.size() - (int) max;
        String head = String.join(sep, parts.subList(0, keep));
        List<String> tail = parts.subList(keep, parts.size());
        out.add(head);
        out.addAll(tail);
      } else {
        out.addAll(parts.subList(0, (int) max));
        out.add(String.join(sep, parts.subList((int) max, parts.size())));
      }
      return out;
    }
    out.addAll(parts);
    return out;
  }

  /**
   * Python's {@code s.split(None, max)}: runs of whitespace separate, leading and trailing whitespace yield no
   * empty words, and after {@code max} splits the rest is one word that keeps its trailing whitespace.
   */
  private static List<@Nullable Object> splitWhitespace(String s, long max) {
    List<@Nullable Object> out = new ArrayList<>();
    int i = 0;
    int n = s.length();
    while (true) {
      while (i < n && Py.isSpace(s.charAt(i))) {
        i++;
      }
      if (i == n) {
        return out;
      }
      if (max >= 0 && out.size() == max) {
        out.add(s.substring(i));
        return out;
      }
      int j = i;
      while (j < n && !Py.isSpace(s.charAt(j))) {
        j++;
      }
      out.add(s.substring(i, j));
      i = j;
    }
  }

  /** Python's {@code s.rsplit(None, max)}: as {@link #splitWhitespace} from the right. */
  private static List<@Nullable Object> rsplitWhitespace(String s, long max) {
    List<@Nullable Object> out = new ArrayList<>();
    int j = s.length();
    while (true) {
      while (j > 0 && Py.isSpace(s.charAt(j - 1))) {
        j--;
      }
      if (j == 0) {
        break;
      }
      if (max >= 0 && out.size() == max) {
        out.add(s.substring(0, j));
        break;
      }
      int i = j;
      while (i > 0 && !Py.isSpace(s.charAt(i - 1))) {
        i--;
      }
      out.add(s.substring(i, j));
      j = i;
    }
    java.util.Collections.reverse(out);
    return out;
  }

  // ---- globals ----

  static Map<String, @Nullable Object> globals(Supplier<ZonedDateTime> clock) {
    Map<String, @Nullable Object> g = new LinkedHashMap<>();
    g.put("range", (Py.Callable) (args, kw) -> {
      if (!kw.isEmpty() || args.isEmpty() || args.size() > 3) {
        throw TemplateException.fail("range takes 1 to 3 positional arguments");
      }
      long start = args.size() == 1 ? 0 : Py.toLong(args.get(0));
      long stop = Py.toLong(args.get(args.size() == 1 ? 0 : 1));
      long step = args.size() == 3 ? Py.toLong(args.get(2)) : 1;
      if (step == 0) {
        throw TemplateException.fail("range() step must not be zero");
      }
      List<@Nullable Object> out = new ArrayList<>();
      for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (out.size() > 1_000_000) {
          throw TemplateException.fail("range too large");
        }
        out.add(i);
      }
      return out;
    });
    g.put("namespace", (Py.Callable) (args, kw) -> {
      Py.Namespace ns = new Py.Namespace();
      for (Object a : args) {
        if (a instanceof Map<?, ?> m) {
          m.forEach((k, v) -> ns.attributes.put(Py.str(k), v));
        } else {
          throw TemplateException.fail("namespace() takes keyword arguments or a mapping");
        }
      }
      ns.attributes.putAll(kw);
      return ns;
    });
    g.put("dict", (Py.Callable) (args, kw) -> {
      if (!args.isEmpty()) {
        throw TemplateException.fail("dict() with positional arguments is not supported");
      }
      return new LinkedHashMap<@Nullable Object, @Nullable Object>(kw);
    });
    g.put("cycler", (Py.Callable) (args, kw) -> cycler(args));
    g.put("lipsum", (Py.Callable) (args, kw) -> { // defined, as in Jinja2, but random text cannot render exactly
      throw TemplateException.fail("lipsum() is not supported by this chat-template engine");
    });
    g.put("joiner", (Py.Callable) (args, kw) -> {
      Args a = new Args("joiner", args, kw);
      String separator = Py.str(a.get("sep", ", "));
      a.done();
      boolean[] used = {false};
      return (Py.Callable) (x, y) -> {
        boolean first = !used[0];
        used[0] = true;
        return first ? "" : separator;
      };
    });
    g.put("raise_exception", (Py.Callable) (args, kw) -> {
      throw new RaisedException(args.isEmpty() ? "" : Py.str(args.get(0)));
    });
    g.put("strftime_now", (Py.Callable) (args, kw) -> {
      if (args.size() != 1) {
        throw TemplateException.fail("strftime_now takes one format argument");
      }
      return strftime(Py.str(args.get(0)), clock.get());
    });
    return g;
  }

  /** Jinja2's {@code cycler(*items)}: {@code next()} returns the items in turn, {@code current} the next one. */
  private static Py.Namespace cycler(List<?> items) {
    if (items.isEmpty()) {
      throw TemplateException.fail("cycler needs at least one item");
    }
    Py.Namespace c = new Py.Namespace();
    int[] position = {0};
    c.attributes.put("current", items.get(0));
    c.attributes.put("next", (Py.Callable) (args, kw) -> {
      Object item = items.get(position[0]);
      position[0] = (position[0] + 1) % items.size();
      c.attributes.put("current", items.get(position[0]));
      return item;
    });
    c.attributes.put("reset", (Py.Callable) (args, kw) -> {
      position[0] = 0;
      c.attributes.put("current", items.get(0));
      return null;
    });
    return c;
  }

  /** A template's {@code raise_exception(message)}. */
  static final class RaisedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RaisedException(String message) {
      super(message);
    }
  }

  static String strftime(String format, ZonedDateTime t) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 >= format.length()) {
        sb.append(c);
        continue;
      }
      char f = format.charAt(++i);
      switch (f) {
        case 'd' -> sb.append(String.format("%02d", t.getDayOfMonth()));
        case 'm' -> sb.append(String.format("%02d", t.getMonthValue()));
        case 'Y' -> sb.append(t.getYear());
        case 'y' -> sb.append(String.format("%02d", t.getYear() % 100));
        case 'H' -> sb.append(String.format("%02d", t.getHour()));
        case 'I' -> sb.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
        case 'M' -> sb.append(String.format("%02d", t.getMinute()));
        case 'S' -> sb.append(String.format("%02d", t.getSecond()));
        case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
        case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
        case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
        case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
        case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
        case 'j' -> sb.append(String.format("%03d", t.getDayOfYear()));
        case 'e' -> sb.append(String.format("%2d", t.getDayOfMonth()));
        case '%' -> sb.append('%');
        default -> throw TemplateException.fail("strftime_now: format %" + f + " is not supported");
      }
    }
    return sb.toString();
  }

  /** Binds Python-style positional and keyword arguments to parameter names, in order. */
  static final class Args {
    private final String function;
    private final List<@Nullable Object> positional;
    private final Map<String, @Nullable Object> keywords;
    private int used;

    Args(String function, List<?> positional, Map<String, ?> keywords) {
      this.function = function;
      this.positional = new ArrayList<>(positional);
      this.keywords = new LinkedHashMap<>(keywords);
    }

    /** The next parameter, positional or by keyword, or {@code dflt}. */
    @Nullable Object get(String name, @Nullable Object dflt) {
      if (used < positional.size()) {
        if (keywords.containsKey(name)) {
          throw TemplateException.fail(function + "() got multiple values for argument '" + name + "'");
        }
        return positional.get(used++);
      }
      used++;
      return keywords.containsKey(name) ? keywords.remove(name) : dflt;
    }

    /** A keyword-only parameter, or null. */
    @Nullable Object getOptional(String name) {
      return keywords.remove(name);
    }

    /** The positional arguments not consumed yet. */
    List<@Nullable Object> positional() {
      List<@Nullable Object> rest = positional.subList(Math.min(used, positional.size()), positional.size());
      used = positional.size();
      return rest;
    }

    Map<String, @Nullable Object> remainingKeywords() {
      Map<String, @Nullable Object> rest = new LinkedHashMap<>(keywords);
      keywords.clear();
      return rest;
    }

    void requireNoKeywords() {
      if (!keywords.isEmpty()) {
        throw TemplateException.fail(function + "() got unexpected keyword arguments " + keywords.keySet());
      }
    }

    void done() {
      if (used < positional.size()) {
        throw TemplateException.fail(function + "() got too many positional arguments");
      }
      requireNoKeywords();
    }
  }
}
