package dev.kinference.policy.classify;

import java.util.EnumSet;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The default personal-data detector, {@code builtin}. It recognises:
 * <ul>
 *   <li>e-mail addresses;</li>
 *   <li>phone numbers written internationally ({@code +} and 8 to 15 digits) or with separators ({@code (555)
 *       123-4567}, {@code 06 12 34 56 78});</li>
 *   <li>payment card numbers: 13 to 19 digits (optionally grouped), a known issuer prefix and a valid Luhn check
 *       digit;</li>
 *   <li>IBANs: country code, length for that country, valid mod-97 check (grouped by four or not);</li>
 *   <li>national identity numbers: US SSN ({@code 123-45-6789}), UK National Insurance number, French NIR (with its
 *       key), Spanish DNI and NIE (with their check letter), Italian codice fiscale (with its check letter);</li>
 *   <li>secrets: OpenAI/Anthropic-style {@code sk-} keys, Stripe, AWS access key ids, GitHub, GitLab, Slack,
 *       Google API, Hugging Face and npm tokens, JSON Web Tokens, PEM private keys.</li>
 * </ul>
 * Check digits keep false positives low; everything is scanned without regular expressions in time linear in the
 * text. Stateless and thread-safe.
 */
public final class BuiltinPersonalDataDetector implements PersonalDataDetector {

  private static final Map<String, Integer> IBAN_LENGTHS = ibanLengths();
  private static final String DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";
  private static final int[] CF_ODD = {1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10,
      22, 25, 24, 23};

  /** Public for {@link java.util.ServiceLoader}. */
  public BuiltinPersonalDataDetector() {}

  @Override
  public String name() {
    return "builtin";
  }

  @Override
  public PersonalData detect(CharSequence text) {
    Findings f = new Findings();
    emails(text, f);
    numbers(text, f);
    words(text, f);
    ibans(text, f);
    markers(text, f);
    return f.count == 0 ? PersonalData.NONE : new PersonalData(f.kinds, f.count);
  }

  private static final class Findings {
    final EnumSet<PersonalDataKind> kinds = EnumSet.noneOf(PersonalDataKind.class);
    int count;

    void add(PersonalDataKind kind) {
      kinds.add(kind);
      count++;
    }
  }

  // ---- e-mail ---------------------------------------------------------------------------------------------------

  private static void emails(CharSequence s, Findings f) {
    int n = s.length();
    for (int at = 0; at < n; at++) {
      if (s.charAt(at) != '@') {
        continue;
      }
      int j = at - 1;
      while (j >= 0 && at - j <= 64 && isLocalChar(s.charAt(j))) {
        j--;
      }
      int localStart = j + 1;
      while (localStart < at && s.charAt(localStart) == '.') {
        localStart++;
      }
      if (localStart >= at) {
        continue;
      }
      int k = at + 1;
      while (k < n && k - at <= 253 && isDomainChar(s.charAt(k))) {
        k++;
      }
      int end = k;
      while (end > at + 1 && (s.charAt(end - 1) == '.' || s.charAt(end - 1) == '-')) {
        end--;
      }
      if (validDomain(s, at + 1, end)) {
        f.add(PersonalDataKind.EMAIL);
        at = end - 1;
      }
    }
  }

  private static boolean isLocalChar(char c) {
    return isAsciiAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
  }

  private static boolean isDomainChar(char c) {
    return isAsciiAlnum(c) || c == '-' || c == '.';
  }

  private static boolean validDomain(CharSequence s, int from, int to) {
    int lastDot = -1;
    int labelLen = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c == '.') {
        if (labelLen == 0) {
          return false;
        }
        lastDot = i;
        labelLen = 0;
      } else {
        labelLen++;
      }
    }
    if (lastDot < 0 || to - lastDot - 1 < 2) {
      return false;
    }
    for (int i = lastDot + 1; i < to; i++) {
      if (!isAsciiLetter(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  // ---- digit groups: cards, phones, SSN, NIR ---------------------------------------------------------------------

  private static void numbers(CharSequence s, Findings f) {
    int n = s.length();
    int i = 0;
    char[] digits = new char[24];
    int[] groupLens = new int[24];
    while (i < n) {
      char c = s.charAt(i);
      boolean starts = isDigit(c) || ((c == '+' || c == '(') && i + 1 < n && isDigit(s.charAt(i + 1)));
      if (!starts || (i > 0 && (isAsciiAlnum(s.charAt(i - 1)) || s.charAt(i - 1) == '.'
          || (isDigit(c) && (s.charAt(i - 1) == '+' || s.charAt(i - 1) == '-'))))) {
        i++;
        continue;
      }
      int start = i;
      boolean plus = c == '+';
      boolean paren = c == '(';
      int j = plus || paren ? i + 1 : i;
      int nd = 0;
      int groups = 0;
      int curGroup = 0;
      int seps = 0;
      boolean dotSep = false;
      boolean overflow = false;
      while (j < n && j - start < 48) {
        char d = s.charAt(j);
        if (isDigit(d)) {
          if (nd < digits.length) {
            digits[nd] = d;
          } else {
            overflow = true;
          }
          nd++;
          curGroup++;
          j++;
          continue;
        }
        // a separator run of at most two characters, followed by a digit or an opening parenthesis
        int k = j;
        while (k < n && k - j < 2 && isSeparator(s.charAt(k))) {
          k++;
        }
        if (k == j || k >= n || !(isDigit(s.charAt(k)) || (s.charAt(k) == '(' && k + 1 < n
            && isDigit(s.charAt(k + 1))))) {
          break;
        }
        for (int q = j; q < k; q++) {
          if (s.charAt(q) == '.') {
            dotSep = true;
          }
        }
        if (groups < groupLens.length) {
          groupLens[groups] = curGroup;
        }
        groups++;
        curGroup = 0;
        seps++;
        j = k;
      }
      if (groups < groupLens.length) {
        groupLens[groups] = curGroup;
      }
      groups++;
      int end = j;
      boolean boundary = end >= n || !(isAsciiLetter(s.charAt(end)) || s.charAt(end) == '_');
      if (boundary && !overflow) {
        PersonalDataKind kind = classifyNumber(s, start, digits, nd, groupLens, Math.min(groups, 24), seps,
            plus, paren, dotSep);
        if (kind != null) {
          f.add(kind);
        }
      }
      i = Math.max(end, start + 1);
    }
  }

  private static boolean isSeparator(char c) {
    return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/';
  }

  private static @Nullable PersonalDataKind classifyNumber(CharSequence s, int start, char[] d, int nd,
      int[] groupLens, int groups, int seps, boolean plus, boolean paren, boolean dotSep) {
    if (!plus && !paren && groups == 3 && groupLens[0] == 3 && groupLens[1] == 2 && groupLens[2] == 4
        && s.charAt(start + 3) == '-' && s.charAt(start + 6) == '-' && validSsn(d)) {
      return PersonalDataKind.NATIONAL_ID;
    }
    if (!plus && !paren && nd >= 13 && nd <= 19 && !dotSep && luhn(d, nd) && knownIssuer(d, nd)) {
      return PersonalDataKind.PAYMENT_CARD;
    }
    if (!plus && !paren && nd == 15 && !dotSep && (d[0] == '1' || d[0] == '2') && validNir(d)) {
      return PersonalDataKind.NATIONAL_ID;
    }
    if (plus && nd >= 8 && nd <= 15 && !dotSep) {
      return PersonalDataKind.PHONE;
    }
    if (!plus && !dotSep && seps >= 2 && groups >= 3 && groups <= 6 && nd >= 9 && nd <= 12) {
      boolean thousands = true;
      for (int g = 1; g < groups; g++) {
        if (groupLens[g] < 2 || groupLens[g] > 4) {
          return null;
        }
        thousands &= groupLens[g] == 3;
      }
      // 1 000 000 000 is a number written with thousands separators, not a phone number
      return groupLens[0] <= 4 && !thousands ? PersonalDataKind.PHONE : null;
    }
    return null;
  }

  private static boolean validSsn(char[] d) {
    int area = (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
    int group = (d[3] - '0') * 10 + (d[4] - '0');
    int serial = (d[5] - '0') * 1000 + (d[6] - '0') * 100 + (d[7] - '0') * 10 + (d[8] - '0');
    return area != 0 && area != 666 && area < 900 && group != 0 && serial != 0;
  }

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

  private static boolean knownIssuer(char[] d, int n) {
    int p2 = (d[0] - '0') * 10 + (d[1] - '0');
    int p4 = p2 * 100 + (d[2] - '0') * 10 + (d[3] - '0');
    if (d[0] == '4') {
      return n == 13 || n == 16 || n == 19; // Visa
    }
    if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) {
      return n == 16; // Mastercard
    }
    if (p2 == 34 || p2 == 37) {
      return n == 15; // American Express
    }
    if (p4 == 6011 || p2 == 65 || (p4 >= 6440 && p4 <= 6499) || p2 == 62) {
      return n >= 16; // Discover, UnionPay
    }
    if (p4 >= 3528 && p4 <= 3589) {
      return n >= 16; // JCB
    }
    if (p2 == 36 || p2 == 38 || (p4 >= 3000 && p4 <= 3059)) {
      return n >= 14; // Diners Club
    }
    return (p2 == 50 || (p2 >= 56 && p2 <= 69)) && n >= 12; // Maestro
  }

  private static boolean validNir(char[] d) {
    long body = 0;
    for (int i = 0; i < 13; i++) {
      body = body * 10 + (d[i] - '0');
    }
    int key = (d[13] - '0') * 10 + (d[14] - '0');
    return key == 97 - (int) (body % 97);
  }

  // ---- words: NINO, DNI/NIE, codice fiscale, token prefixes -------------------------------------------------------

  private static void words(CharSequence s, Findings f) {
    int n = s.length();
    int i = 0;
    while (i < n) {
      if (!isWordChar(s.charAt(i)) || (i > 0 && isWordChar(s.charAt(i - 1)))) {
        i++;
        continue;
      }
      int j = i;
      while (j < n && isWordChar(s.charAt(j))) {
        j++;
      }
      PersonalDataKind kind = classifyWord(s, i, j);
      if (kind != null) {
        f.add(kind);
      }
      i = j;
    }
  }

  private static boolean isWordChar(char c) {
    return isAsciiAlnum(c) || c == '_' || c == '-';
  }

  private static @Nullable PersonalDataKind classifyWord(CharSequence s, int from, int to) {
    int len = to - from;
    if (len == 9 && isNino(s, from)) {
      return PersonalDataKind.NATIONAL_ID;
    }
    if (len == 9 && isDniOrNie(s, from)) {
      return PersonalDataKind.NATIONAL_ID;
    }
    if (len == 16 && isCodiceFiscale(s, from)) {
      return PersonalDataKind.NATIONAL_ID;
    }
    if (len >= 15 && isToken(s, from, to)) {
      return PersonalDataKind.SECRET;
    }
    return null;
  }

  private static boolean isNino(CharSequence s, int i) {
    char a = s.charAt(i);
    char b = s.charAt(i + 1);
    if ("ABCEGHJKLMNOPRSTWXYZ".indexOf(a) < 0 || "ABCEGHJKLMNPRSTWXYZ".indexOf(b) < 0) {
      return false;
    }
    String prefix = "" + a + b;
    if (prefix.equals("BG") || prefix.equals("GB") || prefix.equals("NK") || prefix.equals("KN")
        || prefix.equals("TN") || prefix.equals("NT") || prefix.equals("ZZ")) {
      return false;
    }
    for (int k = 2; k < 8; k++) {
      if (!isDigit(s.charAt(i + k))) {
        return false;
      }
    }
    return "ABCD".indexOf(s.charAt(i + 8)) >= 0;
  }

  private static boolean isDniOrNie(CharSequence s, int i) {
    char first = s.charAt(i);
    int value;
    if (isDigit(first)) {
      value = first - '0';
    } else if (first == 'X' || first == 'Y' || first == 'Z') {
      value = first - 'X';
    } else {
      return false;
    }
    for (int k = 1; k < 8; k++) {
      char c = s.charAt(i + k);
      if (!isDigit(c)) {
        return false;
      }
      value = value * 10 + (c - '0');
    }
    return s.charAt(i + 8) == DNI_LETTERS.charAt(value % 23);
  }

  private static boolean isCodiceFiscale(CharSequence s, int i) {
    // [A-Z]{6} [0-9]{2} [ABCDEHLMPRST] [0-9]{2} [A-Z] [0-9]{3} [A-Z]
    for (int k = 0; k < 16; k++) {
      char c = s.charAt(i + k);
      boolean letter = c >= 'A' && c <= 'Z';
      boolean digit = isDigit(c);
      boolean wantLetter = k < 6 || k == 8 || k == 11 || k == 15;
      if (wantLetter ? !letter : !digit) {
        return false;
      }
    }
    if ("ABCDEHLMPRST".indexOf(s.charAt(i + 8)) < 0) {
      return false;
    }
    int sum = 0;
    for (int k = 0; k < 15; k++) {
      char c = s.charAt(i + k);
      int v = isDigit(c) ? c - '0' : c - 'A';
      sum += (k % 2 == 0) ? CF_ODD[v] : v;
    }
    return s.charAt(i + 15) == (char) ('A' + sum % 26);
  }

  private static boolean isToken(CharSequence s, int from, int to) {
    int len = to - from;
    if (startsWith(s, from, to, "AKIA") || startsWith(s, from, to, "ASIA")) {
      return len == 20 && allUpperAlnum(s, from + 4, to);
    }
    if (startsWith(s, from, to, "AIza")) {
      return len == 39;
    }
    String[][] prefixes = {
        {"sk-", "20"}, {"sk_live_", "20"}, {"sk_test_", "20"}, {"rk_live_", "20"}, {"ghp_", "30"},
        {"gho_", "30"}, {"ghu_", "30"}, {"ghs_", "30"}, {"ghr_", "30"}, {"github_pat_", "40"}, {"glpat-", "20"},
        {"xoxb-", "15"}, {"xoxp-", "15"}, {"xoxa-", "15"}, {"xoxr-", "15"}, {"xoxs-", "15"}, {"hf_", "30"},
        {"npm_", "36"}};
    for (String[] p : prefixes) {
      if (startsWith(s, from, to, p[0])) {
        return len >= Integer.parseInt(p[1]) && mixesLettersAndDigits(s, from + p[0].length(), to);
      }
    }
    return false;
  }

  private static boolean startsWith(CharSequence s, int from, int to, String prefix) {
    if (to - from < prefix.length()) {
      return false;
    }
    for (int k = 0; k < prefix.length(); k++) {
      if (s.charAt(from + k) != prefix.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  private static boolean allUpperAlnum(CharSequence s, int from, int to) {
    for (int k = from; k < to; k++) {
      char c = s.charAt(k);
      if (!(isDigit(c) || (c >= 'A' && c <= 'Z'))) {
        return false;
      }
    }
    return true;
  }

  private static boolean mixesLettersAndDigits(CharSequence s, int from, int to) {
    boolean letter = false;
    boolean digit = false;
    for (int k = from; k < to; k++) {
      char c = s.charAt(k);
      letter |= isAsciiLetter(c);
      digit |= isDigit(c);
    }
    return letter && digit;
  }

  // ---- IBAN -----------------------------------------------------------------------------------------------------

  private static void ibans(CharSequence s, Findings f) {
    int n = s.length();
    char[] buf = new char[34];
    for (int i = 0; i + 4 <= n; i++) {
      char a = s.charAt(i);
      if (!(a >= 'A' && a <= 'Z') || (i > 0 && isAsciiAlnum(s.charAt(i - 1)))) {
        continue;
      }
      char b = s.charAt(i + 1);
      if (!(b >= 'A' && b <= 'Z') || !isDigit(s.charAt(i + 2)) || !isDigit(s.charAt(i + 3))) {
        continue;
      }
      Integer expected = IBAN_LENGTHS.get("" + a + b);
      if (expected == null) {
        continue;
      }
      int len = 0;
      int j = i;
      boolean boundaryAtExpected = false;
      while (j < n && len < 34) {
        char c = s.charAt(j);
        if (isDigit(c) || (c >= 'A' && c <= 'Z')) {
          buf[len++] = c;
          j++;
          if (len == expected) {
            boundaryAtExpected = j >= n || !isAsciiAlnum(s.charAt(j));
            break;
          }
        } else if (c == ' ' && j + 1 < n && isAsciiAlnum(s.charAt(j + 1)) && len % 4 == 0) {
          j++;
        } else {
          break;
        }
      }
      if (len == expected && boundaryAtExpected && mod97(buf, len) == 1) {
        f.add(PersonalDataKind.IBAN);
        i = j - 1;
      }
    }
  }

  private static int mod97(char[] iban, int len) {
    int r = 0;
    for (int k = 0; k < len; k++) {
      char c = iban[(k + 4) % len];
      if (isDigit(c)) {
        r = (r * 10 + (c - '0')) % 97;
      } else {
        r = (r * 100 + (c - 'A' + 10)) % 97;
      }
    }
    return r;
  }

  // ---- private keys and JSON web tokens ---------------------------------------------------------------------------

  private static void markers(CharSequence s, Findings f) {
    String text = s.toString();
    int from = 0;
    while (true) {
      int begin = text.indexOf("-----BEGIN ", from);
      if (begin < 0) {
        break;
      }
      int close = text.indexOf("-----", begin + 11);
      if (close > 0 && close - begin < 60 && text.substring(begin + 11, close).endsWith("PRIVATE KEY")) {
        f.add(PersonalDataKind.SECRET);
      }
      from = begin + 11;
    }
    from = 0;
    while (true) {
      int start = text.indexOf("eyJ", from);
      if (start < 0) {
        break;
      }
      from = start + 3;
      if (start > 0 && isBase64Url(text.charAt(start - 1))) {
        continue;
      }
      int end1 = segmentEnd(text, start);
      if (end1 - start < 10 || end1 >= text.length() || text.charAt(end1) != '.') {
        continue;
      }
      if (!text.startsWith("eyJ", end1 + 1)) {
        continue;
      }
      int end2 = segmentEnd(text, end1 + 1);
      if (end2 - end1 - 1 < 10 || end2 >= text.length() || text.charAt(end2) != '.') {
        continue;
      }
      int end3 = segmentEnd(text, end2 + 1);
      if (end3 - end2 - 1 >= 10) {
        f.add(PersonalDataKind.SECRET);
        from = end3;
      }
    }
  }

  private static int segmentEnd(String s, int from) {
    int i = from;
    while (i < s.length() && i - from < 8192 && isBase64Url(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean isBase64Url(char c) {
    return isAsciiAlnum(c) || c == '-' || c == '_';
  }

  // ---- characters -------------------------------------------------------------------------------------------------

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  private static boolean isAsciiAlnum(char c) {
    return isDigit(c) || isAsciiLetter(c);
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
