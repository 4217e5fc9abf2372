package dev.kinference.vllm.template;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Python's {@code str.format} as Jinja2's sandbox allows it: {@code {}}, {@code {0}}, {@code {name}}, conversions
 * {@code !s} and {@code !r}, {@code {{}} and {@code }}} escaping braces, and format specs
 * {@code [[fill]align][sign][0][width][.precision][type]} with the types {@code s d x X o b f F e E %}.
 * {@code {name.attr}}, {@code {0[key]}}, nested fields, {@code #}, grouping and the types {@code g G n c} fail naming
 * the field.
 */
final class StrFormat {

  private StrFormat() {}

  static String format(String format, List<?> args, Map<String, ?> kwargs) {
    StringBuilder out = new StringBuilder();
    int auto = 0;
    int i = 0;
    int n = format.length();
    while (i < n) {
      char c = format.charAt(i);
      if (c == '{' && i + 1 < n && format.charAt(i + 1) == '{') {
        out.append('{');
        i += 2;
      } else if (c == '}' && i + 1 < n && format.charAt(i + 1) == '}') {
        out.append('}');
        i += 2;
      } else if (c == '{') {
        int close = format.indexOf('}', i);
        if (close < 0) {
          throw TemplateException.fail("format: single '{' encountered in format string");
        }
        String field = format.substring(i + 1, close);
        String spec = null;
        int colon = field.indexOf(':');
        if (colon >= 0) {
          spec = field.substring(colon + 1);
          field = field.substring(0, colon);
        }
        char conversion = ' ';
        int bang = field.indexOf('!');
        if (bang >= 0) {
          conversion = field.length() == bang + 2 ? field.charAt(bang + 1) : '?';
          field = field.substring(0, bang);
        }
        if (field.contains(".") || field.contains("[") || field.contains("{") || (conversion != ' '
            && conversion != 's' && conversion != 'r') || (spec != null && !SPEC.matcher(spec).matches())) {
          throw TemplateException.fail("format: the field {" + format.substring(i + 1, close)
              + "} is not supported by this chat-template engine");
        }
        Object value;
        if (field.isEmpty()) {
          value = arg(args, auto++);
        } else if (field.chars().allMatch(Character::isDigit)) {
          value = arg(args, Integer.parseInt(field));
        } else if (kwargs.containsKey(field)) {
          value = kwargs.get(field);
        } else {
          throw TemplateException.fail("format: no argument named '" + field + "'");
        }
        if (conversion != ' ') {
          value = conversion == 'r' ? Py.repr(value) : Py.str(value);
        }
        out.append(spec == null || spec.isEmpty() ? Py.str(value) : formatSpec(value, spec));
        i = close + 1;
      } else if (c == '}') {
        throw TemplateException.fail("format: single '}' encountered in format string");
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  /** Python's format-spec mini-language, the part this engine implements (widths and precisions below a million). */
  private static final Pattern SPEC =
      Pattern.compile("(?:(.)?([<>=^]))?([-+ ])?(0)?(\\d{1,6})?(?:\\.(\\d{1,6}))?([sdxXobfFeE%])?", Pattern.DOTALL);

  /** {@code format(value, spec)} for a spec {@link #SPEC} matches. */
  private static String formatSpec(@Nullable Object value, String spec) {
    Matcher m = SPEC.matcher(spec);
    if (!m.matches()) {
      throw new IllegalStateException(spec);
    }
    String fill = m.group(1) == null ? " " : m.group(1);
    String align = m.group(2);
    String sign = m.group(3) == null ? "-" : m.group(3);
    boolean zero = m.group(4) != null;
    int width = m.group(5) == null ? 0 : Integer.parseInt(m.group(5));
    int precision = m.group(6) == null ? -1 : Integer.parseInt(m.group(6));
    char type = m.group(7) == null ? ' ' : m.group(7).charAt(0);
    Object v = value instanceof Boolean b ? (b ? 1L : 0L) : value; // bool formats as int once a spec is given
    String body;
    boolean number = Py.isNumber(v);
    if (v instanceof String s) {
      if (type != ' ' && type != 's') {
        throw TemplateException.fail("format: unknown format code '" + type + "' for object of type 'str'");
      }
      if (m.group(3) != null || "=".equals(align)) {
        throw TemplateException.fail("format: sign or '=' alignment not allowed in string format specifier");
      }
      body = precision >= 0 && precision < s.codePointCount(0, s.length())
          ? s.substring(0, s.offsetByCodePoints(0, precision)) : s;
    } else if (number && Py.isInt(v) && "dxXob ".indexOf(type) >= 0) {
      if (precision >= 0) {
        throw TemplateException.fail("format: precision not allowed in integer format specifier");
      }
      java.math.BigInteger n = Py.toBig(v);
      int radix = switch (type) {
        case 'x', 'X' -> 16;
        case 'o' -> 8;
        case 'b' -> 2;
        default -> 10;
      };
      String digits = n.abs().toString(radix);
      body = (n.signum() < 0 ? "-" : sign.equals("-") ? "" : sign) + (type == 'X'
          ? digits.toUpperCase(java.util.Locale.ROOT) : digits);
    } else if (number && "fFeE%".indexOf(type) >= 0) {
      double d = Py.toDouble(v);
      int p = precision < 0 ? 6 : precision;
      String flags = sign.equals("-") ? "" : sign;
      body = type == '%' ? PercentFormat.format("%" + flags + "." + p + "f", List.of(d * 100)) + "%"
          : PercentFormat.format("%" + flags + "." + p + type, List.of(d));
    } else if (number && type == ' ' && precision < 0) {
      String text = Py.str(v);
      body = text.startsWith("-") || sign.equals("-") ? text : sign + text;
    } else {
      throw TemplateException.fail("format: the spec '" + spec + "' for " + Py.typeName(value)
          + " is not supported by this chat-template engine");
    }
    if (align == null) {
      align = zero ? (number ? "=" : "<") : number ? ">" : "<";
      fill = zero ? "0" : fill;
    }
    int missing = width - body.codePointCount(0, body.length());
    if (missing <= 0) {
      return body;
    }
    return switch (align) {
      case "<" -> body + fill.repeat(missing);
      case "^" -> fill.repeat(missing / 2) + body + fill.repeat(missing - missing / 2);
      case "=" -> {
        int signLength = !body.isEmpty() && "+- ".indexOf(body.charAt(0)) >= 0 ? 1 : 0;
        yield body.substring(0, signLength) + fill.repeat(missing) + body.substring(signLength);
      }
      default -> fill.repeat(missing) + body;
    };
  }

  private static @Nullable Object arg(List<?> args, int index) {
    if (index >= args.size()) {
      throw TemplateException.fail("format: replacement index " + index + " out of range");
    }
    return args.get(index);
  }
}
