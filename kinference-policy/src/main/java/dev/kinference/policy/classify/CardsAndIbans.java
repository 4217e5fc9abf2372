package dev.kinference.policy.classify;

import java.util.Map;

/**
 * Payment cards (13 to 19 digits with any one separator: space, dash or dot; a known issuer prefix and length; a valid
 * Luhn check digit) and IBANs (any case, any spacing; the country's length and the mod-97 check). Hand-written: the
 * checks are a few lines each and a library for them (such as Apache Commons Validator) would be a dependency for
 * less than this file, with no case- or spacing-tolerant scanner.
 */
final class CardsAndIbans {

  private static final Map<String, Integer> IBAN_LENGTHS = ibanLengths();

  private CardsAndIbans() {}

  /** Words for a payment card, for 13-digit numbers (EAN-13 barcodes pass Luhn too). */
  private static final String[] CARD_WORDS = {"card", "karte", "carte", "tarjeta", "carta", "cartão", "cartao",
      "kaart", "karta", "карт", "卡", "カード", "بطاقة", "कार्ड", "kart", "visa", "mastercard", "amex", "kredit",
      "credit", "debit", "cc ", "pan "};

  /** Whether {@code run} is a card number (and then it is added). */
  static boolean card(DigitRun run, String lower, Findings f) {
    if (run.plus || run.paren || run.slash || run.nd < 13 || run.nd > 19) {
      return false;
    }
    if (run.nd == 13 && !Chars.near(lower, run.start - 40, run.start, CARD_WORDS)) {
      return false; // 13-digit cards are rare; EAN-13 barcodes are everywhere
    }
    if (run.groupCount > 1 && !((run.onlySeparator(' ') || run.onlySeparator('-') || run.onlySeparator('.'))
        && grouped(run))) {
      return false;
    }
    if (!Checksums.luhn(run.digits, run.nd) || !knownIssuer(run.digits, run.nd)) {
      return false;
    }
    f.add(PersonalDataKind.PAYMENT_CARD, run.start, run.end);
    return true;
  }

  /** Printed as cards are: groups of four (the last may be shorter), or 4-6-5 and 4-6-4 (Amex, Diners). */
  private static boolean grouped(DigitRun run) {
    if (run.shaped(4, 6, 5) || run.shaped(4, 6, 4)) {
      return true;
    }
    for (int g = 0; g < run.groupCount - 1; g++) {
      if (run.groups[g] != 4) {
        return false;
      }
    }
    return run.groups[run.groupCount - 1] <= 4;
  }

  static boolean knownIssuer(char[] d, int n) {
    int p2 = (d[0] - '0') * 10 + (d[1] - '0');
    int p4 = p2 * 100 + (d[2] - '0') * 10 + (d[3] - '0');
    int p6 = p4 * 100 + (d[4] - '0') * 10 + (d[5] - '0');
    if (d[0] == '4') {
      return n == 13 || n == 16 || n == 19; // Visa
    }
    if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) {
      return n == 16; // Mastercard
    }
    if (p2 == 34 || p2 == 37) {
      return n == 15; // American Express
    }
    if (p4 == 6011 || p2 == 65 || (p4 >= 6440 && p4 <= 6499) || p2 == 62 || (p6 >= 622126 && p6 <= 622925)) {
      return n >= 16; // Discover, UnionPay
    }
    if (p4 >= 3528 && p4 <= 3589) {
      return n >= 16; // JCB
    }
    if (p2 == 36 || p2 == 38 || p2 == 39 || (p4 >= 3000 && p4 <= 3059)) {
      return n >= 14; // Diners Club
    }
    if (p4 >= 2200 && p4 <= 2204) {
      return n == 16; // Mir
    }
    if (p2 == 60 || p2 == 81 || p2 == 82 || p4 == 5081 || p6 == 508500) {
      return n == 16; // RuPay
    }
    return (p2 == 50 || (p2 >= 56 && p2 <= 69)) && n >= 12; // Maestro
  }

  /**
   * An IBAN at word start {@code i}: two letters, two digits and the rest, upper or lower case, single spaces or
   * dashes; where it ends, or -1.
   */
  static int ibanAt(String s, int i, char[] buf) {
    int n = s.length();
    if (i + 4 > n) {
      return -1;
    }
    char a = Chars.upper(s.charAt(i));
    char b = Chars.upper(s.charAt(i + 1));
    if (!Chars.isUpperAscii(a) || !Chars.isUpperAscii(b)) {
      return -1;
    }
    // ES54..., es 54 ..., GB1 3BARC ...: the check digits may be spaced off the country code too
    int k = i + 2;
    while (k < n && k - i < 4 && s.charAt(k) == ' ') {
      k++;
    }
    if (k >= n || !Chars.isDigit(s.charAt(k))) {
      return -1;
    }
    Integer expected = IBAN_LENGTHS.get("" + a + b);
    if (expected == null) {
      return -1;
    }
    int end = collect(s, i, expected, buf);
    return end > 0 && Chars.isDigit(buf[2]) && Chars.isDigit(buf[3]) && Checksums.ibanMod97(buf, expected) ? end
        : -1;
  }

  /** Collects {@code len} alphanumerics from {@code i} (upper-cased) into buf: where they end, or -1. */
  private static int collect(String s, int i, int len, char[] buf) {
    int n = s.length();
    int got = 0;
    int j = i;
    while (j < n && got < len) {
      char c = s.charAt(j);
      if (Chars.isAsciiAlnum(c)) {
        buf[got++] = Chars.upper(c);
        j++;
      } else if ((c == ' ' || c == '-' || c == '\u00a0') && got >= 2) {
        // one or two separators between groups of any size ("AT89  3386  1533", "ES 54 7918 9089 58 ...")
        int k = j + 1;
        if (k < n && (s.charAt(k) == ' ' || s.charAt(k) == '\u00a0')) {
          k++;
        }
        if (k >= n || !Chars.isAsciiAlnum(s.charAt(k))) {
          return -1;
        }
        j = k;
      } else {
        return -1;
      }
    }
    if (got < len || (j < n && Chars.isAsciiAlnum(s.charAt(j)))) {
      return -1;
    }
    return j;
  }

  private static Map<String, Integer> ibanLengths() {
    String table = "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 EE20 "
        + "EG29 ES24 FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 "
        + "LB28 LC32 LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 "
        + "RS22 SA24 SC31 SE24 SI19 SK24 SM27 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20";
    Map<String, Integer> m = new java.util.HashMap<>();
    for (String e : table.split(" ")) {
      m.put(e.substring(0, 2), Integer.parseInt(e.substring(2)));
    }
    return Map.copyOf(m);
  }
}
