package dev.kinference.vllm.template;

import java.util.Locale;

/**
 * Python's case mappings of {@code str} ({@code title}, {@code capitalize}, {@code swapcase}, {@code casefold}) and
 * Jinja2's {@code title} filter, over code points with Unicode's full mappings as Python applies them: Java's
 * char-wise {@code Character} methods and {@code String.toUpperCase} differ on 'ß', ligatures and uncased letters.
 */
final class CaseMapping {

  private CaseMapping() {}

  /**
   * Python's {@code str.title}: a cased character after an uncased one gets its title case (full mapping: 'ß' becomes
   * "Ss"), every other character its lower case; digits and CJK characters are uncased.
   */
  static String title(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    boolean previousCased = false;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      sb.append(previousCased ? lowerFull(cp) : titleFull(cp));
      previousCased = Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
    }
    return sb.toString();
  }

  /** Python's {@code str.capitalize}: the first character in title case, the rest in lower case. */
  static String capitalize(String s) {
    if (s.isEmpty()) {
      return s;
    }
    int first = s.codePointAt(0);
    return titleFull(first) + s.substring(Character.charCount(first)).toLowerCase(Locale.ROOT);
  }

  private static final java.util.regex.Pattern WORD_BEGINNING =
      java.util.regex.Pattern.compile("[-\\s({\\[<]+", java.util.regex.Pattern.UNICODE_CHARACTER_CLASS);

  /**
   * Jinja2's {@code title} filter, which is not {@code str.title}: the text split at runs of whitespace and
   * any of the characters <code>-({[&lt;</code>, each piece's first character upper-cased and the rest lower-cased ("x'y 2nd" stays "X'y 2nd").
   */
  static String titleFilter(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    java.util.regex.Matcher m = WORD_BEGINNING.matcher(s);
    int at = 0;
    while (at < s.length()) {
      int end = m.find(at) ? m.start() : s.length();
      if (end > at) {
        int first = s.codePointAt(at);
        sb.append(new String(Character.toChars(first)).toUpperCase(Locale.ROOT))
            .append(s.substring(at + Character.charCount(first), end).toLowerCase(Locale.ROOT));
      }
      if (end < s.length()) {
        sb.append(s, m.start(), m.end());
        at = m.end();
      } else {
        at = end;
      }
    }
    return sb.toString();
  }

  private static String lowerFull(int cp) {
    return new String(Character.toChars(cp)).toLowerCase(Locale.ROOT);
  }

  /** Unicode's full title-case mapping, as Python applies it: 'ß' becomes "Ss", 'ǆ' becomes 'ǅ'. */
  private static String titleFull(int cp) {
    String upper = new String(Character.toChars(cp)).toUpperCase(Locale.ROOT);
    if (upper.codePointCount(0, upper.length()) > 1) {
      int head = upper.codePointAt(0);
      return new String(Character.toChars(head)) + upper.substring(Character.charCount(head)).toLowerCase(Locale.ROOT);
    }
    return new String(Character.toChars(Character.toTitleCase(cp)));
  }

  /** Python's {@code str.casefold}, close enough: each code point upper- then lower-cased ('ß' becomes "ss"). */
  static String caseFold(String s) {
    StringBuilder out = new StringBuilder(s.length());
    s.codePoints().forEach(cp -> out.append(new String(Character.toChars(cp)).toUpperCase(Locale.ROOT)
        .toLowerCase(Locale.ROOT)));
    return out.toString();
  }

  /** Python's {@code str.swapcase}: each cased character to the other case ('ß' becomes "SS"). */
  static String swapCase(String s) {
    StringBuilder out = new StringBuilder(s.length());
    s.codePoints().forEach(cp -> {
      String c = new String(Character.toChars(cp));
      out.append(Character.isUpperCase(cp) ? c.toLowerCase(Locale.ROOT)
          : Character.isLowerCase(cp) ? c.toUpperCase(Locale.ROOT) : c);
    });
    return out.toString();
  }
}
