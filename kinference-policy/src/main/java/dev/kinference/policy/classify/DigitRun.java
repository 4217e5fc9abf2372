package dev.kinference.policy.classify;

/**
 * A run of digits joined by short separators (space, {@code - . / ( )}), the raw material of cards, phone numbers and
 * numeric identifiers. {@link #next} finds the next one in time linear in the text; a run is never longer than
 * {@value #MAX_DIGITS} digits (a longer one, such as a hash or a big number, is skipped whole). Hand-written: a
 * scanner of a few dozen lines, cheaper than a regular expression and without backtracking. One per call.
 */
final class DigitRun {

  static final int MAX_DIGITS = 24;

  final char[] digits = new char[MAX_DIGITS];
  final int[] groups = new int[MAX_DIGITS];
  /** Separator after each group: the first separator character. */
  final char[] seps = new char[MAX_DIGITS];
  int nd;
  int groupCount;
  int start;
  int end;
  boolean plus;
  boolean paren;
  boolean dot;
  boolean slash;

  /** Finds the next run at or after {@code from}; false when there is none. */
  boolean next(String s, int from) {
    int n = s.length();
    int i = from;
    while (i < n) {
      char c = s.charAt(i);
      boolean starts = Chars.isDigit(c) || ((c == '+' || c == '(') && i + 1 < n && Chars.isDigit(s.charAt(i + 1)));
      if (!starts || (i > 0 && leftAttached(s.charAt(i - 1), c)
          && !(s.charAt(i - 1) == ':' && (i < 2 || !Chars.isDigit(s.charAt(i - 2)))))) {
        i++;
        continue;
      }
      int j = scan(s, i);
      if (j < 0) {
        i = -j;
        continue;
      }
      return true;
    }
    return false;
  }

  private static boolean leftAttached(char prev, char c) {
    return Chars.isAsciiAlnum(prev) || prev == '_' || prev == '.' || prev == ','
        || (Chars.isDigit(c) && (prev == '+' || prev == '-' || prev == '/' || prev == '#' || prev == '$'
            || prev == '€' || prev == '£' || prev == ':'))
        || (Character.isLetterOrDigit(prev) && prev < 0x2E80); // CJK is written without spaces
  }

  /** Scans a run starting at {@code i}: its end, or minus where to resume when it is not a run to classify. */
  private int scan(String s, int i) {
    int n = s.length();
    start = i;
    plus = s.charAt(i) == '+';
    paren = s.charAt(i) == '(';
    dot = false;
    slash = false;
    nd = 0;
    groupCount = 0;
    int cur = 0;
    int j = plus || paren ? i + 1 : i;
    while (j < n) {
      char d = s.charAt(j);
      if (Chars.isDigit(d)) {
        if (nd == MAX_DIGITS) {
          return -skipDigits(s, j);
        }
        digits[nd++] = d;
        cur++;
        j++;
        continue;
      }
      int k = j;
      while (k < n && k - j < 2 && isSeparator(s.charAt(k))) {
        k++;
      }
      boolean continues = k > j && k < n && (Chars.isDigit(s.charAt(k))
          || (s.charAt(k) == '(' && k + 1 < n && Chars.isDigit(s.charAt(k + 1))));
      if (!continues || groupCount == MAX_DIGITS - 1) {
        break;
      }
      for (int q = j; q < k; q++) {
        dot |= s.charAt(q) == '.';
        slash |= s.charAt(q) == '/';
      }
      seps[groupCount] = s.charAt(j);
      groups[groupCount++] = cur;
      cur = 0;
      j = k;
    }
    seps[groupCount] = 0;
    groups[groupCount++] = cur;
    end = j;
    if (end < n && (Chars.isAsciiLetter(s.charAt(end)) || s.charAt(end) == '_'
        || (s.charAt(end) == '.' && end + 1 < n && Chars.isDigit(s.charAt(end + 1))))) {
      return -Math.max(end, i + 1); // part of a word or a longer number
    }
    return end;
  }

  private static int skipDigits(String s, int j) {
    int k = j;
    while (k < s.length() && (Chars.isDigit(s.charAt(k)) || isSeparator(s.charAt(k)))) {
      k++;
    }
    return k;
  }

  static boolean isSeparator(char c) {
    return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/' || c == '\u00a0';
  }

  /** The digits as a string. */
  String digitString() {
    return new String(digits, 0, nd);
  }

  int digit(int k) {
    return digits[k] - '0';
  }

  /** Whether every separator is {@code c} or the run has none. */
  boolean onlySeparator(char c) {
    for (int g = 0; g < groupCount - 1; g++) {
      if (seps[g] != c) {
        return false;
      }
    }
    return true;
  }

  /** Whether the groups are exactly {@code lens}. */
  boolean shaped(int... lens) {
    if (lens.length != groupCount) {
      return false;
    }
    for (int g = 0; g < lens.length; g++) {
      if (groups[g] != lens[g]) {
        return false;
      }
    }
    return true;
  }
}
