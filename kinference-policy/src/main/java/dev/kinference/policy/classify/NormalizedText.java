package dev.kinference.policy.classify;

import java.text.Normalizer;
import java.util.Locale;

/**
 * Prompt text as the personal-data families read it: percent-encoded ASCII decoded ({@code jane.doe%40example.com},
 * as in image and link URLs) and HTML character references too (&amp;#64; for @), then Unicode NFKC (full-width letters and digits become ASCII, {@code ＠} becomes
 * {@code @}), plus a lower-case copy of the same length. Offsets of findings are offsets into {@link #text}, which can
 * differ from the caller's text when it held percent escapes or characters that NFKC rewrites. JDK only
 * ({@link Normalizer}); an all-ASCII text without {@code %} is used as it is, and a text whose only characters that
 * NFKC changes are full-width ASCII and spaces (most Chinese and Japanese prompts) is folded by a table, which gives
 * the same result at a fraction of the cost. Decimal digits of every script read as ASCII digits.
 */
record NormalizedText(String text, String lower) {

  static NormalizedText of(CharSequence raw) {
    String s = raw.toString();
    if (s.indexOf('&') >= 0 && (s.contains("&#") || s.contains("&commat;") || s.contains("&period;"))) {
      s = entitiesDecoded(s); // mike&#64;example&#46;com, as written into HTML
    }
    int n = s.length();
    boolean ascii = true;
    boolean percent = false;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      ascii &= c < 0x80;
      percent |= c == '%';
    }
    if (ascii) {
      String decoded = percent ? percentDecoded(s) : s;
      return new NormalizedText(decoded, decoded.toLowerCase(Locale.ROOT));
    }
    if (percent) {
      s = percentDecoded(s);
      n = s.length();
    }
    // one pass: full-width ASCII and spaces folded, lower case; NFKC proper only when something else needs it
    char[] text = new char[n];
    char[] lower = new char[n];
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x80 && needsNormalizer(c)) {
        String normalized = asciiDigits(Normalizer.normalize(s, Normalizer.Form.NFKC));
        return new NormalizedText(normalized, lowerPerChar(normalized));
      }
      char folded = c < 0x80 ? c : fold(c);
      text[i] = folded;
      lower[i] = lower(folded);
    }
    return new NormalizedText(new String(text), new String(lower));
  }

  private static char fold(char c) {
    if (c >= 0xFF01 && c <= 0xFF5E) {
      return (char) (c - 0xFEE0);
    }
    if (Character.isDigit(c)) {
      return (char) ('0' + Character.digit(c, 10)); // Devanagari, Arabic-Indic, ... digits read as ASCII ones
    }
    return c == 0x00A0 || c == 0x3000 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F ? ' ' : c;
  }

  private static char lower(char c) {
    if (c < 0x80) {
      return c >= 'A' && c <= 'Z' ? (char) (c + 32) : c;
    }
    return c < 0x2E80 || c >= 0xFF00 ? Character.toLowerCase(c) : c; // CJK has no case
  }

  /** Lower case one character for one (U+0130 and a few others would otherwise become two and move offsets). */
  private static String lowerPerChar(String s) {
    char[] out = new char[s.length()];
    for (int i = 0; i < out.length; i++) {
      out[i] = lower(s.charAt(i));
    }
    return new String(out);
  }

  /** Whether NFKC changes {@code c} in a way {@link #fold} does not. */
  static boolean needsNormalizer(char c) {
    if (c < 0x300 || (c >= 0x370 && c < 0x1100) || (c >= 0x1200 && c < 0x2070) || c == 0x3000) {
      return false;
    }
    // full-width ASCII (folded by table), CJK, kana, Hangul syllables, Yi, variation selectors
    return !((c >= 0xFF01 && c <= 0xFF5E) || (c >= 0x3001 && c < 0x3131) || (c >= 0x3190 && c < 0x3200)
        || (c >= 0x3400 && c < 0xF900) || (c >= 0xFE00 && c < 0xFE10));
  }

  /** Decimal digits of any script as ASCII digits, one character for one (NFKC leaves most of them). */
  private static String asciiDigits(String s) {
    char[] out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 0x80 && Character.isDigit(c)) {
        if (out == null) {
          out = s.toCharArray();
        }
        out[i] = (char) ('0' + Character.digit(c, 10));
      }
    }
    return out == null ? s : new String(out);
  }

  /** HTML character references of printable ASCII (&amp;#64;, &amp;#x40;, &amp;commat;) decoded. */
  static String entitiesDecoded(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c == '&') {
        int semi = s.indexOf(';', i);
        if (semi > i && semi - i <= 9) {
          String ref = s.substring(i + 1, semi);
          int v = -1;
          if (ref.equals("commat")) {
            v = '@';
          } else if (ref.equals("period")) {
            v = '.';
          } else if (ref.length() > 1 && ref.charAt(0) == '#') {
            boolean hex = ref.charAt(1) == 'x' || ref.charAt(1) == 'X';
            try {
              v = Integer.parseInt(ref.substring(hex ? 2 : 1), hex ? 16 : 10);
            } catch (NumberFormatException e) {
              v = -1;
            }
          }
          if (v >= 0x20 && v < 0x7f) {
            sb.append((char) v);
            i = semi;
            continue;
          }
        }
      }
      sb.append(c);
    }
    return sb.toString();
  }

  /** {@code %XX} escapes of printable ASCII decoded; anything else (including {@code %25}-free junk) kept. */
  static String percentDecoded(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < n) {
        int hi = Character.digit(s.charAt(i + 1), 16);
        int lo = Character.digit(s.charAt(i + 2), 16);
        int v = hi * 16 + lo;
        if (hi >= 0 && lo >= 0 && v >= 0x20 && v < 0x7f) {
          sb.append((char) v);
          i += 2;
          continue;
        }
      }
      sb.append(c);
    }
    return sb.toString();
  }

  int length() {
    return text.length();
  }
}
