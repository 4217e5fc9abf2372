package dev.kinference.policy.classify;

/**
 * Passport numbers: the word for passport in one of fifteen languages and, within a short window after it, an
 * upper-case token of 6 to 10 letters and digits, with at least four digits, or at least one when 8 or longer (German
 * {@code C1KR9PCH5} and Dutch {@code RMKZBRRN9} are mostly letters) (US and UK {@code 123456789}, German
 * {@code C01X00T47}, Indian
 * {@code J8369854}, Chinese {@code E12345678}, Russian {@code 45 12 345678}). There is no check digit outside the
 * machine-readable zone, so the keyword carries the weight. Hand-written (keyword search and a shape).
 */
final class Passports {

  /** Lower case. Latin words must start a word; "pass" alone is too common (password) and is not one of them. */
  static final String[] KEYWORDS = {"passport", "reisepass", "passnummer", "pass-nr", "pass nr", "passnr",
      "passeport", "pasaporte", "passaporto", "paspoort", "passaporte", "paszport", "паспорт", "护照", "護照",
      "パスポート", "旅券", "جواز السفر", "جواز سفر", "pasaport", "पासपोर्ट", "여권", "pass no"};
  private static final int WINDOW = 40;

  private Passports() {}

  static void find(NormalizedText t, Keywords.Hits hits, Findings f) {
    String s = t.text();
    for (int k = 0; k < hits.count(ProfileKeywords.PASSPORT); k++) {
      int from = hits.end(ProfileKeywords.PASSPORT, k);
      long span = number(s, from, Math.min(s.length(), from + WINDOW));
      int start = (int) (span >>> 32);
      int end = (int) span;
      if (span >= 0 && !f.claimed(start, end)) {
        f.add(PersonalDataKind.PASSPORT, start, end);
      }
    }
  }

  /** Where a passport-shaped token starts in {@code [from, to)} (high 32 bits) and ends (low), or -1. */
  private static long number(String s, int from, int to) {
    int i = from;
    while (i < to) {
      if (!Chars.isAsciiAlnum(s.charAt(i)) || (i > 0 && Chars.isAsciiAlnum(s.charAt(i - 1)))) {
        i++;
        continue;
      }
      int j = i;
      int len = 0;
      int digits = 0;
      while (j < s.length() && len <= 10) {
        char c = s.charAt(j);
        if (Chars.isAsciiAlnum(c)) {
          len++;
          digits += Chars.isDigit(c) ? 1 : 0;
          j++;
        } else if (c == ' ' && digits == len && len >= 2 && len <= 4 && j + 1 < s.length()
            && Chars.isDigit(s.charAt(j + 1))) {
          j++; // 45 12 345678
        } else {
          break;
        }
      }
      boolean upperOrDigits = true;
      for (int q = i; q < j; q++) {
        upperOrDigits &= !Chars.isAsciiLetter(s.charAt(q)) || Chars.isUpperAscii(s.charAt(q));
      }
      boolean next = j < s.length() && (s.charAt(j) == '-' || s.charAt(j) == '/' || (s.charAt(j) == '.'
          && j + 1 < s.length() && Chars.isDigit(s.charAt(j + 1))));
      // German and Dutch numbers are mostly letters (C1KR9PCH5, RMKZBRRN9): a long one needs a digit, a short one four
      boolean shaped = len >= 8 ? digits >= 1 : digits >= 4;
      if (len >= 6 && len <= 10 && shaped && upperOrDigits && !next && !(i > 0 && s.charAt(i - 1) == '-')) {
        return ((long) i << 32) | j;
      }
      i = Math.max(j, i + 1);
    }
    return -1;
  }
}
