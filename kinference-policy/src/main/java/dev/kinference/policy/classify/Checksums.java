package dev.kinference.policy.classify;

/**
 * Check-digit algorithms of cards, IBANs and national identifiers, on ASCII digits (and letters where noted).
 * Hand-written: each is a few lines from its standard (ISO 7064, ICAO 9303, the issuing authorities); Apache Commons
 * Validator has Luhn, IBAN and Verhoeff but none of the national ones.
 */
final class Checksums {

  private static final int[][] VERHOEFF_D = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
      {3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
      {6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
      {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}};
  private static final int[][] VERHOEFF_P = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
      {8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 7, 6, 8, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
      {2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}};

  private Checksums() {}

  static boolean luhn(char[] d, int n) {
    int sum = 0;
    boolean dbl = false;
    for (int i = n - 1; i >= 0; i--) {
      int v = d[i] - '0';
      if (dbl) {
        v *= 2;
        if (v > 9) {
          v -= 9;
        }
      }
      sum += v;
      dbl = !dbl;
    }
    return sum % 10 == 0;
  }

  /** IBAN check: upper-case letters and digits, the first four moved to the end, mod 97 is 1. */
  static boolean ibanMod97(char[] iban, int len) {
    int r = 0;
    for (int k = 0; k < len; k++) {
      char c = iban[(k + 4) % len];
      r = Chars.isDigit(c) ? (r * 10 + (c - '0')) % 97 : (r * 100 + (c - 'A' + 10)) % 97;
    }
    return r == 1;
  }

  /** Verhoeff over all {@code n} digits (the last is the check digit). */
  static boolean verhoeff(char[] d, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) {
      c = VERHOEFF_D[c][VERHOEFF_P[i % 8][d[n - 1 - i] - '0']];
    }
    return c == 0;
  }

  /** ISO 7064 MOD 11-2 of a Chinese resident identity number: 17 digits and a check character (digit or X). */
  static boolean mod11_2(char[] d) {
    int sum = 0;
    for (int i = 0; i < 17; i++) {
      sum += (d[i] - '0') * ((1 << (17 - i)) % 11);
    }
    int check = (12 - sum % 11) % 11;
    return d[17] == (check == 10 ? 'X' : (char) ('0' + check));
  }

  /** ISO 7064 MOD 11,10 of the German tax identification number (11 digits). */
  static boolean mod11_10(char[] d) {
    int product = 10;
    for (int i = 0; i < 10; i++) {
      int sum = (d[i] - '0' + product) % 10;
      if (sum == 0) {
        sum = 10;
      }
      product = (sum * 2) % 11;
    }
    int check = 11 - product;
    return (check == 10 ? 0 : check) == d[10] - '0';
  }

  /** The German tax id's rule: in the first ten digits one digit occurs twice or three times (not three in a row). */
  static boolean steuerIdDigits(char[] d) {
    int[] counts = new int[10];
    for (int i = 0; i < 10; i++) {
      counts[d[i] - '0']++;
    }
    int repeated = 0;
    int missing = 0;
    for (int c : counts) {
      if (c == 0) {
        missing++;
      } else if (c == 2 || c == 3) {
        repeated++;
      } else if (c > 3) {
        return false;
      }
    }
    for (int i = 0; i + 2 < 10; i++) {
      if (d[i] == d[i + 1] && d[i] == d[i + 2]) {
        return false;
      }
    }
    return d[0] != '0' && repeated == 1 && (missing == 1 || missing == 2);
  }

  /** The Dutch BSN's 11-test (9 digits). */
  static boolean elevenTest(char[] d) {
    int sum = 0;
    for (int i = 0; i < 8; i++) {
      sum += (9 - i) * (d[i] - '0');
    }
    sum -= d[8] - '0';
    return sum % 11 == 0 && sum != 0;
  }

  /** Brazil's CPF: 11 digits, two mod-11 check digits, not all the same digit. */
  static boolean cpf(char[] d) {
    boolean same = true;
    for (int i = 1; i < 11; i++) {
      same &= d[i] == d[0];
    }
    if (same) {
      return false;
    }
    for (int k = 9; k <= 10; k++) {
      int sum = 0;
      for (int i = 0; i < k; i++) {
        sum += (d[i] - '0') * (k + 1 - i);
      }
      int check = (sum * 10) % 11 % 10;
      if (check != d[k] - '0') {
        return false;
      }
    }
    return true;
  }

  /** ICAO 9303 7-3-1 check digit of {@code s[from, to)} (digits, A-Z as 10-35, {@code <} as 0). */
  static int icao731(CharSequence s, int from, int to) {
    int[] w = {7, 3, 1};
    int sum = 0;
    for (int i = from; i < to; i++) {
      char c = Chars.upper(s.charAt(i));
      int v = Chars.isDigit(c) ? c - '0' : Chars.isUpperAscii(c) ? c - 'A' + 10 : 0;
      sum += v * w[(i - from) % 3];
    }
    return sum % 10;
  }
}
