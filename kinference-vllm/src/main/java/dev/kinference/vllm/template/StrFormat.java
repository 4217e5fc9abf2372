package dev.kinference.vllm.template;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Python's {@code str.format} as Jinja2's sandbox allows it: {@code {}}, {@code {0}}, {@code {name}},
 * {@code {name.attr}} / {@code {0[key]}} are not supported, nor format specs other than none; conversions
 * {@code !s} and {@code !r}; {@code {{}} and {@code }}} escape braces. Anything else fails naming it.
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
        char conversion = 's';
        int bang = field.indexOf('!');
        if (bang >= 0) {
          conversion = field.length() > bang + 1 ? field.charAt(bang + 1) : '?';
          field = field.substring(0, bang);
        }
        if (field.contains(":") || field.contains(".") || field.contains("[") || (conversion != 's'
            && conversion != 'r')) {
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
        out.append(conversion == 'r' ? Py.repr(value) : Py.str(value));
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

  private static @Nullable Object arg(List<?> args, int index) {
    if (index >= args.size()) {
      throw TemplateException.fail("format: replacement index " + index + " out of range");
    }
    return args.get(index);
  }
}
