package dev.kinference.policy.classify;

/**
 * National identity numbers, each with its check where it has one: US SSN (areas 000, 666 and 9xx rejected; bare nine
 * digits only after a keyword), UK National Insurance number (valid prefixes, spaced as printed), French NIR (key),
 * Spanish DNI and NIE (letter), Italian codice fiscale (check character, omocodia), German Steuer-ID (MOD 11,10 and
 * the repetition rule, after a keyword), German ID card number (7-3-1, after a keyword), Dutch BSN (11-test, after a
 * keyword), Indian Aadhaar (Verhoeff, first digit 2-9; grouped 4-4-4 or after a keyword), Chinese resident identity
 * number (ISO 7064 MOD 11-2 and a plausible birth date), Brazilian CPF (two mod-11 digits; printed {@code
 * 000.000.000-00} or after a keyword). Hand-written: no maintained Java library covers these checks together
 * (Apache Commons Validator has a few, none of the scanning).
 */
final class NationalIds {

  private static final String DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";
  private static final int[] CF_ODD = {1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10,
      22, 25, 24, 23};
  private static final String CF_OMOCODIA = "LMNPQRSTUV";
  private static final int KEYWORD_WINDOW = 48;

  private NationalIds() {}

  // ---- numeric, from digit runs -----------------------------------------------------------------------------------

  /** Whether {@code run} is a numeric national identifier (and then it is added). */
  static boolean numeric(DigitRun r, String lower, Findings f) {
    if (r.plus || r.paren || r.slash) {
      return false;
    }
    boolean found = switch (r.nd) {
      case 9 -> ssn(r, lower) || (keyword(lower, r, "bsn", "burgerservicenummer", "sofinummer", "citizen service")
          && Checksums.elevenTest(r.digits));
      case 11 -> cpf(r, lower) || steuerId(r, lower);
      case 12 -> r.digits[0] >= '2' && (r.shaped(4, 4, 4) || keyword(lower, r, "aadhaar", "aadhar", "uidai", "आधार"))
          && Checksums.verhoeff(r.digits, 12);
      case 15 -> r.onlySeparator(' ') && (r.digits[0] == '1' || r.digits[0] == '2') && nir(r.digits);
      // 420106 19640708 7590: a Chinese resident id printed in its parts (region, birth date, sequence and check)
      case 18 -> r.groupCount > 1 && chineseId(new String(r.digits, 0, 18), 0);
      default -> false;
    };
    if (found) {
      f.add(PersonalDataKind.NATIONAL_ID, r.start, r.end);
    }
    return found;
  }

  private static boolean keyword(String lower, DigitRun r, String... words) {
    return Chars.near(lower, r.start - KEYWORD_WINDOW, r.start, words);
  }

  private static boolean ssn(DigitRun r, String lower) {
    boolean printed = r.shaped(3, 2, 4) && (r.onlySeparator('-') || r.onlySeparator(' '));
    if (!printed && !(r.groupCount == 1 && keyword(lower, r, "ssn", "social security", "ss#", "soc sec"))) {
      return false;
    }
    char[] d = r.digits;
    int area = (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
    int group = (d[3] - '0') * 10 + (d[4] - '0');
    int serial = (d[5] - '0') * 1000 + (d[6] - '0') * 100 + (d[7] - '0') * 10 + (d[8] - '0');
    return area != 0 && area != 666 && area < 900 && group != 0 && serial != 0;
  }

  private static boolean cpf(DigitRun r, String lower) {
    boolean printed = r.shaped(3, 3, 3, 2) && r.seps[0] == '.' && r.seps[1] == '.' && r.seps[2] == '-';
    return (printed || keyword(lower, r, "cpf")) && Checksums.cpf(r.digits);
  }

  private static boolean steuerId(DigitRun r, String lower) {
    return r.onlySeparator(' ')
        && keyword(lower, r, "steuer", "idnr", "identifikationsnummer", "tax id", "tin", "steueridentifikation")
        && Checksums.steuerIdDigits(r.digits) && Checksums.mod11_10(r.digits);
  }

  private static boolean nir(char[] d) {
    long body = 0;
    for (int i = 0; i < 13; i++) {
      body = body * 10 + (d[i] - '0');
    }
    int key = (d[13] - '0') * 10 + (d[14] - '0');
    return key == 97 - (int) (body % 97);
  }

  // ---- with letters, at the start of each word --------------------------------------------------------------------

  /**
   * One pass over the words of the text: at each start of an ASCII word, an IBAN ({@link CardsAndIbans#ibanAt}), an
   * identifier with letters (NINO, DNI/NIE, codice fiscale, Chinese id with X, German ID card), or a postal code
   * for {@link Addresses} (kept in {@code f}).
   */
  static void words(String s, String lower, Findings f) {
    int n = s.length();
    char[] buf = new char[34];
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      char prev = i > 0 ? s.charAt(i - 1) : ' ';
      if (!Chars.isAsciiAlnum(c) || Chars.isAsciiAlnum(prev) || prev == '_') {
        continue;
      }
      int iban = Chars.isAsciiLetter(c) ? CardsAndIbans.ibanAt(s, i, buf) : -1;
      if (iban > 0) {
        f.add(PersonalDataKind.IBAN, i, iban);
        i = iban - 1;
        continue;
      }
      if (prev != '-' && prev != '.' && prev != '+' && Addresses.postalAt(s, i)) {
        f.postal(i);
      }
      i = word(s, lower, i, f) - 1;
    }
  }

  /** An identifier with letters at word start {@code i} (added to f): where to go on from. */
  private static int word(String s, String lower, int i, Findings f) {
    int n = s.length();
    int j = i;
    while (j < n && Chars.isAsciiAlnum(s.charAt(j))) {
      j++;
    }
    if (j < n && s.charAt(j) == '_') {
      return j;
    }
    int end = nino(s, i);
    if (end < 0) {
      end = dniOrNie(s, i);
    }
    if (end < 0 && j - i == 16 && codiceFiscale(s, i)) {
      end = j;
    }
    if (end < 0 && j - i == 18 && chineseId(s, i)) {
      end = j;
    }
    if (end < 0 && j - i == 10 && germanIdCard(s, lower, i)) {
      end = j;
    }
    if (end > 0) {
      f.add(PersonalDataKind.NATIONAL_ID, i, end);
      return end;
    }
    return j;
  }

  /** A NINO at {@code i} ({@code AB123456C}, {@code AB 12 34 56 C}, any case): its end, or -1. */
  static int nino(String s, int i) {
    int n = s.length();
    if (i + 9 > n) {
      return -1;
    }
    char a = Chars.upper(s.charAt(i));
    char b = Chars.upper(s.charAt(i + 1));
    if ("ABCEGHJKLMNOPRSTWXYZ".indexOf(a) < 0 || "ABCEGHJKLMNPRSTWXYZ".indexOf(b) < 0) {
      return -1;
    }
    int j = i + 2;
    for (int pair = 0; pair < 3; pair++) {
      if (j < n && s.charAt(j) == ' ') {
        j++;
      }
      if (j + 2 > n || !Chars.isDigit(s.charAt(j)) || !Chars.isDigit(s.charAt(j + 1))) {
        return -1;
      }
      j += 2;
    }
    if (j < n && s.charAt(j) == ' ') {
      j++;
    }
    if (j >= n || "ABCD".indexOf(Chars.upper(s.charAt(j))) < 0 || Chars.isAsciiAlnum(at(s, j + 1))) {
      return -1;
    }
    String prefix = "" + a + b;
    return "BG GB NK KN TN NT ZZ".contains(prefix) ? -1 : j + 1;
  }

  /** A DNI ({@code 12345678Z}, {@code 12345678-Z}) or NIE ({@code X1234567L}) at {@code i}: its end, or -1. */
  static int dniOrNie(String s, int i) {
    char first = Chars.upper(s.charAt(i));
    int value;
    if (Chars.isDigit(first)) {
      value = first - '0';
    } else if (first == 'X' || first == 'Y' || first == 'Z') {
      value = first - 'X';
    } else {
      return -1;
    }
    for (int k = 1; k < 8; k++) {
      char c = at(s, i + k);
      if (!Chars.isDigit(c)) {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    int j = i + 8;
    if ((at(s, j) == '-' || at(s, j) == ' ') && Chars.isDigit(first)) {
      j++;
    }
    char letter = Chars.upper(at(s, j));
    if (letter != DNI_LETTERS.charAt(value % 23) || Chars.isAsciiAlnum(at(s, j + 1))) {
      return -1;
    }
    return j + 1;
  }

  private static char at(String s, int i) {
    return i < s.length() ? s.charAt(i) : 0;
  }

  /** An Italian codice fiscale (16 characters, any case, omocodia allowed) with a valid check character. */
  static boolean codiceFiscale(String s, int i) {
    int sum = 0;
    for (int k = 0; k < 16; k++) {
      char c = Chars.upper(s.charAt(i + k));
      boolean wantLetter = k < 6 || k == 8 || k == 11 || k == 15;
      boolean ok = wantLetter ? Chars.isUpperAscii(c) : Chars.isDigit(c) || CF_OMOCODIA.indexOf(c) >= 0;
      if (!ok || (k == 8 && "ABCDEHLMPRST".indexOf(c) < 0)) {
        return false;
      }
      if (k < 15) {
        int v = Chars.isDigit(c) ? c - '0' : c - 'A';
        sum += (k % 2 == 0) ? CF_ODD[v] : v;
      } else {
        return c == (char) ('A' + sum % 26);
      }
    }
    return false;
  }

  /** A Chinese resident identity number: 17 digits and a check digit or X, a birth date 1900-2099, MOD 11-2. */
  static boolean chineseId(String s, int i) {
    char[] d = new char[18];
    for (int k = 0; k < 18; k++) {
      char c = Chars.upper(s.charAt(i + k));
      if (!Chars.isDigit(c) && !(k == 17 && c == 'X')) {
        return false;
      }
      d[k] = c;
    }
    int year = Integer.parseInt(new String(d, 6, 4));
    int month = (d[10] - '0') * 10 + (d[11] - '0');
    int day = (d[12] - '0') * 10 + (d[13] - '0');
    return year >= 1900 && year <= 2099 && month >= 1 && month <= 12 && day >= 1 && day <= 31
        && d[0] != '0' && Checksums.mod11_2(d);
  }

  /** A German ID card number (9 characters and a 7-3-1 check digit) after a keyword for it. */
  static boolean germanIdCard(String s, String lower, int i) {
    String alphabet = "CFGHJKLMNPRTVWXYZ0123456789";
    int digits = 0;
    for (int k = 0; k < 10; k++) {
      char c = Chars.upper(s.charAt(i + k));
      if (alphabet.indexOf(c) < 0 || (k == 9 && !Chars.isDigit(c))) {
        return false;
      }
      digits += Chars.isDigit(c) ? 1 : 0;
    }
    // the serial may have as few as one digit besides the check digit (YRL0W7PVJ0): the keyword and the check decide
    return !Chars.isDigit(s.charAt(i)) && digits >= 2 && Checksums.icao731(s, i, i + 9) == s.charAt(i + 9) - '0'
        && Chars.near(lower, i - 60, i, "ausweis", "personalausweis", "id card", "identity card", "id-karte",
            "personalausweisnummer", "dokumentennummer", "document number", "perso");
  }
}
