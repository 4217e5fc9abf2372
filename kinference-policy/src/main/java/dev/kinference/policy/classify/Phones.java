package dev.kinference.policy.classify;

import com.google.i18n.phonenumbers.PhoneNumberUtil;
import com.google.i18n.phonenumbers.PhoneNumberUtil.PhoneNumberFormat;
import com.google.i18n.phonenumbers.Phonenumber.PhoneNumber;
import org.jspecify.annotations.Nullable;

/**
 * Phone numbers, validated by Google's libphonenumber ({@code com.googlecode.libphonenumber}): international
 * ({@code +} or {@code 00}) numbers of any country, national numbers of the EU, UK, US, India, China, Brazil, Japan
 * and the Gulf states. libphonenumber's own {@code findNumbers} is not used: over a dozen default regions it costs
 * far more than the budget (it runs its regular expressions over the whole text once per region), so a cheap
 * pre-filter over {@link DigitRun}s rejects dates, times, IP addresses, versions, decimals, ports and thousands and
 * only the survivors are validated: the number is built from its digits (country code, trunk prefix stripped) and
 * checked with {@code isValidNumberForRegion}, about ten times cheaper than {@code PhoneNumberUtil.parse} (measured:
 * 0.9 against 8.7 µs a region on this 2-core machine under load). A national number
 * without a trunk prefix, parenthesis or separator needs a phone keyword nearby (order numbers are like that).
 */
final class Phones {

  private static final PhoneNumberUtil UTIL = PhoneNumberUtil.getInstance();
  /** Regions tried for national numbers, most likely first. */
  private static final String[] REGIONS = {"US", "GB", "DE", "FR", "IN", "CN", "BR", "JP", "ES", "IT", "NL", "AE",
      "SA", "QA", "KW", "BH", "OM", "PL", "PT", "AT", "BE", "CH", "SE", "IE", "DK", "FI", "GR", "CZ", "RO", "HU"};
  private static final int[] CODES = new int[REGIONS.length];
  private static final @Nullable String[] TRUNK = new String[REGIONS.length];
  /** Per region, bit n set when a national significant number of n digits is possible there (from the metadata). */
  private static final int[] LENGTHS = new int[REGIONS.length];

  static {
    for (int k = 0; k < REGIONS.length; k++) {
      CODES[k] = UTIL.getCountryCodeForRegion(REGIONS[k]);
      TRUNK[k] = UTIL.getNddPrefixForRegion(REGIONS[k], true);
      for (int len = 2; len <= 17; len++) {
        // isPossibleNumber looks at the length only (the metadata's possible lengths)
        PhoneNumber probe = new PhoneNumber().setCountryCode(CODES[k]).setNationalNumber(
            Long.parseLong("1" + "0".repeat(len - 1)));
        if (UTIL.isPossibleNumber(probe)) {
          LENGTHS[k] |= 1 << len;
        }
      }
    }
  }

  private static final String[] KEYWORDS = {"phone", "tel.", "tel:", "tel ", "call me", "call us", "call him", "call her", "call on", "call at", "call:", "please call", "call back", "tlf", "tfno", "mobile", "cell", "fax",
      "whatsapp", "sms", "text me", "ring me", "handy", "telefon", "rufnummer", "téléphone", "telephone", "portable",
      "teléfono", "telefono", "móvil", "movil", "cellulare", "celular", "telefoon", "mobiel", "telefone", "telemóvel", "telemovel", "komórk",
      "телефон", "мобильн", "电话", "手机", "電話", "携帯", "هاتف", "جوال", "फ़ोन", "फोन", "मोबाइल", "전화", "휴대폰",
      "contact", "reach me", "dial", "llámame", "llamame", "llama al", "llamar al", "appelle-moi", "appelez",
      "ruf mich", "rufen sie", "anrufen", "chiamami", "chiamare", "me liga", "ligue para", "ligar para", "bel me",
      "zadzwoń", "zadzwon", "позвони", "звоните", "ara beni", "arayın", "numaram", "رقمي", "اتصل", "कॉल", "मेरा नंबर",
      "电话号码", "打电话", "電話番号", "my number", "mein nummer", "meine nummer", "mon numéro", "mi número",
      "il mio numero", "meu número", "mijn nummer", "mój numer", "мой номер"};

  private Phones() {}

  /** Whether {@code run} is a phone number (and then it is added). */
  static boolean phone(DigitRun r, NormalizedText t, Findings f) {
    String s = t.text();
    if (r.nd < 7 || r.nd > 15 || rejected(r, s, Chars.near(t.lower(), r.start - 40, r.start, KEYWORDS))) {
      return false;
    }
    String digits = r.digitString();
    boolean international = r.plus || (digits.startsWith("00") && !r.paren);
    boolean valid;
    if (international) {
      valid = r.nd >= 9 && validInternational(r.plus ? digits : digits.substring(2));
    } else {
      valid = validNational(digits, s.substring(r.start, r.end), nationalShape(r, t));
      // 91-9812345670, phone 49 151 2345678: a country calling code written apart, without + or 00 (with a space,
      // only beside a phone word: "Meeting ID: 845 2231 9876" is not Vietnam)
      if (!valid && r.nd >= 11 && r.groupCount >= 2 && r.groups[0] <= 3 && r.digits[0] != '0'
          && (r.seps[0] == '-' || (r.seps[0] == ' ' && Chars.near(t.lower(), r.start - 40, r.start, KEYWORDS)))) {
        valid = validInternational(digits);
      }
    }
    if (valid) {
      f.add(PersonalDataKind.PHONE, r.start, r.end);
    }
    return valid;
  }

  /** {@code digits} after {@code +} or {@code 00}: a country calling code and a valid number for it. */
  private static boolean validInternational(String digits) {
    for (int ccLen = 1; ccLen <= 3 && ccLen < digits.length(); ccLen++) {
      int cc = Integer.parseInt(digits, 0, ccLen, 10);
      if (UTIL.getRegionCodeForCountryCode(cc).equals("ZZ")) {
        continue;
      }
      String nsn = digits.substring(ccLen);
      PhoneNumber number = number(cc, nsn);
      if (number != null && UTIL.isValidNumber(number)) {
        return true;
      }
      // +49 (0)30 1234567: the trunk prefix written in brackets
      PhoneNumber withoutTrunk = nsn.startsWith("0") ? number(cc, nsn.substring(1)) : null;
      return withoutTrunk != null && UTIL.isValidNumber(withoutTrunk);
    }
    return false;
  }

  /**
   * Valid in one of {@link #REGIONS} (its trunk prefix stripped); unless {@code shaped} (keyword, trunk prefix or
   * parenthesis), also grouped as that region prints its numbers (its last group as long as the candidate's):
   * {@code 2024-000123} is an invoice.
   */
  private static boolean validNational(String digits, String written, Shape shaped) {
    if (shaped == Shape.NO) {
      return false;
    }
    for (int k = 0; k < REGIONS.length; k++) {
      String trunk = TRUNK[k];
      String nsn = trunk != null && digits.startsWith(trunk) ? digits.substring(trunk.length()) : digits;
      if ((LENGTHS[k] & (1 << nsn.length())) == 0) {
        continue; // cheaper than the region's regular expressions
      }
      PhoneNumber number = number(CODES[k], nsn);
      if (number != null && UTIL.isValidNumberForRegion(number, REGIONS[k]) && (shaped == Shape.YES
          || lastGroup(UTIL.format(number, PhoneNumberFormat.NATIONAL)) == lastGroup(written))) {
        return true;
      }
    }
    return false;
  }

  /**
   * A number from its country code and national significant number, built directly: {@code PhoneNumberUtil.parse}
   * costs about ten times more (its general-purpose extraction runs several regular expressions).
   */
  private static @Nullable PhoneNumber number(int countryCode, String nsn) {
    int zeros = 0;
    while (zeros < nsn.length() && nsn.charAt(zeros) == '0') {
      zeros++;
    }
    if (zeros == nsn.length() || nsn.length() > 17) {
      return null;
    }
    PhoneNumber number = new PhoneNumber().setCountryCode(countryCode).setNationalNumber(Long.parseLong(nsn));
    if (zeros > 0) {
      number.setItalianLeadingZero(true);
      if (zeros > 1) {
        number.setNumberOfLeadingZeros(zeros);
      }
    }
    return number;
  }

  private static int lastGroup(String s) {
    int end = s.length();
    while (end > 0 && !Chars.isDigit(s.charAt(end - 1))) {
      end--;
    }
    int start = end;
    while (start > 0 && Chars.isDigit(s.charAt(start - 1))) {
      start--;
    }
    return end - start;
  }

  /** Shapes that are not phone numbers whatever a region says: dates, times, IPs, versions, ports, thousands. */
  private static boolean rejected(DigitRun r, String s, boolean keyword) {
    char before = r.start > 0 ? s.charAt(r.start - 1) : ' ';
    char after = r.end < s.length() ? s.charAt(r.end) : ' ';
    boolean label = before == ':' && (r.start < 2 || !Character.isLetterOrDigit(s.charAt(r.start - 2))
        || (r.nd >= 7 && !Chars.isDigit(s.charAt(r.start - 2))));
    if (!keyword && codeBefore(s, r.start)) {
      return true; // UPS 1Z 999 AA1 01 2345 6784: part of a code
    }
    if (after == ':' || (before == ':' && !label) || after == '%' || (before == '=' && !r.plus) || before == '#'
        || before == '@') {
      return true; // 10:00, host:8080, 20%, x=, #1234, @2x (but tel=+4915...: a number in a link)
    }
    if (date(r)) {
      return true;
    }
    if (r.dot && r.groupCount <= 4 && !(r.groupCount == 3 && r.groups[0] == 3 && r.groups[1] == 3
        && r.groups[2] == 4)) {
      return true; // 192.168.1.10, 1.2.3, 3.14159 (but 212.555.0187: no IP or version has a 4-digit part)
    }
    if (!r.plus && !keyword && r.groupCount >= 2 && r.groups[0] <= 3) {
      boolean thousands = true;
      for (int g = 1; g < r.groupCount; g++) {
        thousands &= r.groups[g] == 3;
      }
      if (thousands && !(r.groupCount == 2 && r.groups[0] == 3) && r.seps[0] != '-') {
        return true; // 1 000 000
      }
    }
    return false;
  }

  /** Whether the word just before {@code start} (one space between) mixes letters and digits. */
  private static boolean codeBefore(String s, int start) {
    if (start < 2 || s.charAt(start - 1) != ' ') {
      return false;
    }
    boolean letter = false;
    boolean digit = false;
    for (int i = start - 2; i >= 0 && Chars.isAsciiAlnum(s.charAt(i)); i--) {
      letter |= Chars.isAsciiLetter(s.charAt(i));
      digit |= Chars.isDigit(s.charAt(i));
    }
    return letter && digit;
  }

  private static boolean date(DigitRun r) {
    int g0 = r.groups[0];
    boolean year = g0 == 4 && ((r.digits[0] == '1' && r.digits[1] == '9') || (r.digits[0] == '2' && r.digits[1] == '0'));
    if (year && r.groupCount >= 2 && r.groups[1] <= 2 && r.seps[0] != ' ') {
      return true; // 2024-10-0457: a number that starts with a year and a month (invoices, tickets)
    }
    if (r.groupCount >= 3 && ((g0 == 4 && r.groups[1] <= 2 && r.groups[2] <= 2)
        || (g0 <= 2 && r.groups[1] <= 2 && (r.groups[2] == 4 || r.groups[2] == 2) && r.groupCount <= 4
            && r.seps[0] != ' ' && r.seps[0] == r.seps[1]))) {
      return true; // 2024-01-02 10, 02.01.2024, 01/02/24
    }
    // 20240102 1000, 2024 01 02: a year of this century or the last at the start and a month after it
    if (g0 >= 8 && ((r.digits[0] == '1' && r.digits[1] == '9') || (r.digits[0] == '2' && r.digits[1] == '0'))) {
      int month = (r.digits[4] - '0') * 10 + (r.digits[5] - '0');
      int day = (r.digits[6] - '0') * 10 + (r.digits[7] - '0');
      return month >= 1 && month <= 12 && day >= 1 && day <= 31;
    }
    return false;
  }

  private enum Shape { YES, IF_GROUPED_AS_PRINTED, NO }

  /** A national number must look like one: a phone keyword before it, a trunk prefix or parenthesis, or grouping. */
  private static Shape nationalShape(DigitRun r, NormalizedText t) {
    if (Chars.near(t.lower(), r.start - 40, r.start, KEYWORDS)) {
      return Shape.YES;
    }
    if (r.digits[0] == '0' || r.paren) {
      return r.nd >= 9 ? Shape.YES : Shape.NO;
    }
    return r.groupCount >= 2 && r.nd >= 10 && r.groups[0] >= 2 ? Shape.IF_GROUPED_AS_PRINTED : Shape.NO;
  }
}
