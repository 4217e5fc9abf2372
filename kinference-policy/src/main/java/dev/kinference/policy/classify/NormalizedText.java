package dev.kinference.policy.classify;

import java.text.Normalizer;
import java.util.Locale;

/**
 * Prompt text as the personal-data families read it: percent-encoded ASCII decoded ({@code jane.doe%40example.com},
 * as in image and link URLs), then Unicode NFKC (full-width letters and digits become ASCII, {@code ＠} becomes
 * {@code @}), plus a lower-case copy of the same length. Offsets of findings are offsets into {@link #text}, which can
 * differ from the caller's text when it held percent escapes or characters that NFKC rewrites. JDK only
 * ({@link Normalizer}); an all-ASCII text without {@code %} is used as it is, and a text whose only characters that
 * NFKC changes are full-width ASCII and spaces (most Chinese and Japanese prompts) is folded by a table, which gives
 * the same result at a fraction of the cost.
 */
record NormalizedText(String text, String lower) {

  static NormalizedText of(CharSequence raw) {
    String s = raw.toString();
    boolean ascii = true;
    boolean percent = false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      ascii &= c < 0x80;
      percent |= c == '%';
    }
    if (percent) {
      s = percentDecoded(s);
    }
    if (!ascii) {
      s = needsNormalizer(s) ? Normalizer.normalize(s, Normalizer.Form.NFKC) : widthFolded(s);
    }
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.length() != s.length()) {
      // a few characters (such as U+0130) lower-case to two; keep one per character so offsets agree
      StringBuilder sb = new StringBuilder(s.length());
      for (int i = 0; i < s.length(); i++) {
        sb.append(Character.toLowerCase(s.charAt(i)));
      }
      lower = sb.toString();
    }
    return new NormalizedText(s, lower);
  }

  /** Whether {@code s} has a character NFKC changes other than full-width ASCII and spaces. */
  static boolean needsNormalizer(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x300 || (c >= 0x370 && c < 0x1100) || (c >= 0x1200 && c < 0x2070) || c == 0x3000) {
        continue;
      }
      if ((c >= 0xFF01 && c <= 0xFF5E) || (c >= 0x3001 && c < 0x3131) || (c >= 0x3190 && c < 0x3200)
          || (c >= 0x3400 && c < 0xF900) || (c >= 0xFE00 && c < 0xFE10)) {
        continue; // full-width ASCII (folded by table), CJK, kana, Hangul syllables, Yi, variation selectors
      }
      return true;
    }
    return false;
  }

  /** Full-width ASCII to ASCII; no-break, ideographic and typographic spaces to a space (as NFKC does). */
  static String widthFolded(String s) {
    char[] out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      char folded = c >= 0xFF01 && c <= 0xFF5E ? (char) (c - 0xFEE0)
          : c == 0x00A0 || c == 0x3000 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F ? ' ' : c;
      if (folded != c) {
        if (out == null) {
          out = s.toCharArray();
        }
        out[i] = folded;
      }
    }
    return out == null ? s : new String(out);
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
