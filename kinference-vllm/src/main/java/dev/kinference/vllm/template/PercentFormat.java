package dev.kinference.vllm.template;

import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Python's printf-style {@code format % values}, used by Jinja2's {@code format} filter and the {@code %} operator
 * on strings: conversions {@code s r d i f F e E x X o c %} with the flags {@code - 0 + space}, a width and a
 * precision. Anything else fails with the conversion named.
 */
final class PercentFormat {

  private PercentFormat() {}

  /** {@code format % mapping}: every conversion names its key, {@code %(name)s}. */
  static String format(String format, java.util.Map<?, ?> mapping) {
    return format(format, List.of(), mapping);
  }

  static String format(String format, List<@Nullable Object> values) {
    return format(format, values, null);
  }

  private static String format(String format, List<@Nullable Object> values, java.util.@Nullable Map<?, ?> mapping) {
    StringBuilder out = new StringBuilder();
    int next = 0;
    int i = 0;
    int n = format.length();
    while (i < n) {
      char c = format.charAt(i++);
      if (c != '%') {
        out.append(c);
        continue;
      }
      String key = null;
      if (mapping != null && i < n && format.charAt(i) == '(') {
        int close = format.indexOf(')', i);
        if (close < 0) {
          throw TemplateException.fail("incomplete format key");
        }
        key = format.substring(i + 1, close);
        i = close + 1;
      }
      int start = i;
      while (i < n && "-0+ #".indexOf(format.charAt(i)) >= 0) {
        i++;
      }
      String flags = format.substring(start, i);
      start = i;
      while (i < n && Character.isDigit(format.charAt(i))) {
        i++;
      }
      int width = i > start ? Integer.parseInt(format.substring(start, i)) : 0;
      int precision = -1;
      if (i < n && format.charAt(i) == '.') {
        start = ++i;
        while (i < n && Character.isDigit(format.charAt(i))) {
          i++;
        }
        precision = i > start ? Integer.parseInt(format.substring(start, i)) : 0;
      }
      if (i >= n) {
        throw TemplateException.fail("incomplete format");
      }
      char conversion = format.charAt(i++);
      if (conversion == '%') {
        out.append('%');
        continue;
      }
      Object value;
      if (mapping != null) {
        if (key == null) {
          throw TemplateException.fail("format requires a mapping key, %(name)s");
        }
        if (!mapping.containsKey(key)) {
          throw TemplateException.fail("format: no key '" + key + "'");
        }
        value = mapping.get(key);
      } else if (next < values.size()) {
        value = values.get(next++);
      } else {
        throw TemplateException.fail("not enough arguments for format string");
      }
      String text = convert(conversion, value, flags, precision);
      out.append(pad(text, width, flags, conversion));
    }
    if (next < values.size()) {
      throw TemplateException.fail("not all arguments converted during string formatting");
    }
    return out.toString();
  }

  private static String convert(char conversion, @Nullable Object v, String flags, int precision) {
    String sign = flags.contains("+") ? "+" : flags.contains(" ") ? " " : "";
    return switch (conversion) {
      case 's' -> cut(Py.str(v), precision);
      case 'r', 'a' -> cut(Py.repr(v), precision);
      case 'd', 'i', 'u' -> signed(Py.isInt(v) ? Py.toBig(v).toString()
          : new java.math.BigDecimal(Py.toDouble(v)).toBigInteger().toString(), sign);
      case 'x', 'X', 'o' -> {
        String digits = Py.toBig(v).toString(conversion == 'o' ? 8 : 16);
        yield signed(conversion == 'X' ? digits.toUpperCase(Locale.ROOT) : digits, sign);
      }
      case 'f', 'F' -> {
        double d = Py.toDouble(v);
        String fixed = Double.isFinite(d) ? new java.math.BigDecimal(d) // half to even on the exact value, as C
            .setScale(precision < 0 ? 6 : precision, java.math.RoundingMode.HALF_EVEN).toPlainString()
            : Double.isNaN(d) ? "nan" : d > 0 ? "inf" : "-inf";
        yield signed(d < 0 && !fixed.startsWith("-") ? "-" + fixed : fixed, sign);
      }
      case 'e', 'E' -> {
        String e = String.format(Locale.ROOT, "%." + (precision < 0 ? 6 : precision) + "e", Py.toDouble(v));
        yield signed(conversion == 'E' ? e.toUpperCase(Locale.ROOT) : e, sign);
      }
      case 'c' -> v instanceof String s ? s : new String(Character.toChars((int) Py.toLong(v)));
      default -> throw TemplateException.fail("unsupported format character '" + conversion + "'");
    };
  }

  private static String cut(String s, int precision) {
    return precision >= 0 && precision < s.length() ? s.substring(0, precision) : s;
  }

  private static String signed(String digits, String sign) {
    return digits.startsWith("-") ? digits : sign + digits;
  }

  private static String pad(String text, int width, String flags, char conversion) {
    if (text.length() >= width) {
      return text;
    }
    String fill = " ".repeat(width - text.length());
    if (flags.contains("-")) {
      return text + fill;
    }
    if (flags.contains("0") && "sr".indexOf(conversion) < 0) {
      boolean signed = text.startsWith("-") || text.startsWith("+") || text.startsWith(" ");
      return signed ? text.charAt(0) + "0".repeat(width - text.length()) + text.substring(1)
          : "0".repeat(width - text.length()) + text;
    }
    return fill + text;
  }
}
