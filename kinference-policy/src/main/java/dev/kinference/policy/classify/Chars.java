package dev.kinference.policy.classify;

/** Character classes and keyword look-ups shared by the personal-data families. */
final class Chars {

  private Chars() {}

  static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  static boolean isAsciiAlnum(char c) {
    return isDigit(c) || isAsciiLetter(c);
  }

  static char upper(char c) {
    return c >= 'a' && c <= 'z' ? (char) (c - 32) : c;
  }

  static boolean isUpperAscii(char c) {
    return c >= 'A' && c <= 'Z';
  }

  /** Whether {@code s} has a letter or digit (any script) at {@code i}. */
  static boolean isWordAt(CharSequence s, int i) {
    return i >= 0 && i < s.length() && Character.isLetterOrDigit(s.charAt(i));
  }

  /**
   * Whether one of {@code words} (lower case) occurs in {@code lower} in {@code [from, to)}, clamped to the text. A
   * word that starts with an ASCII letter must start a word.
   */
  static boolean near(String lower, int from, int to, String... words) {
    return find(lower, Math.max(0, from), Math.min(lower.length(), to), words) >= 0;
  }

  /** Where the first of {@code words} is in {@code [from, to)} (each word must fit), or -1. */
  static int find(String lower, int from, int to, String... words) {
    int best = -1;
    for (String w : words) {
      int at = lower.indexOf(w, from, to);
      while (at >= 0 && at + w.length() <= to) {
        if (!isAsciiLetter(w.charAt(0)) || at == 0 || !isAsciiLetter(lower.charAt(at - 1))) {
          if (best < 0 || at < best) {
            best = at;
          }
          break;
        }
        at = lower.indexOf(w, at + 1, to);
      }
    }
    return best;
  }
}
