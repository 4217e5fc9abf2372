package dev.kinference.policy.classify;

import java.util.Arrays;
import java.util.Set;

/**
 * Where postal addresses seem to be, for {@link PersonProfiles}: a house number beside a street word, or a postal
 * code beside a city (found in {@link NationalIds#words}' pass and kept in {@link Findings}). Hand-written: address
 * parsers (libpostal) are native libraries with gigabytes of models, far beyond the budget. Keyword search (String.indexOf) and short local checks; no regular expressions.
 */
final class Addresses {

  /** Street words written after the street's name, before or after a house number (12 Baker Street, Main St 5). */
  static final String[] STREET_WORDS = {"street", "st.", "st", "road", "rd.", "rd", "avenue", "ave.", "ave",
      "lane", "ln.", "drive", "dr.", "boulevard", "blvd", "blvd.", "way", "place", "court", "terrace", "crescent",
      "close", "square", "highway", "parkway", "rue", "avenue", "allée", "impasse", "chemin", "quai", "calle",
      "c/", "avenida", "avda.", "plaza", "paseo", "carrer", "via", "viale", "piazza", "corso", "largo", "rua",
      "travessa", "praça", "av.", "alameda", "ul.", "ulica", "al.", "ул.", "улица", "проспект", "пр.", "cadde",
      "caddesi", "sokak", "sok.", "mahallesi", "straße", "strasse", "str.", "gasse", "allee", "platz", "weg",
      "straat", "laan", "gracht", "plein", "kade", "steeg", "vej", "gatan", "gata", "katu", "p.o. box", "po box",
      "p.o.box", "postfach", "apartado", "caixa postal", "boîte postale", "casella postale", "postbus",
      "skrytka pocztowa", "شارع", "मकान", "सेक्टर", "गली", "मोहल्ला"};
  /** Street words written before the street's name, with the house number after it (Calle Mayor 5, Via Roma 12). */
  private static final Set<String> NUMBER_AFTER = Set.of("calle", "c/", "avenida", "avda.", "plaza", "paseo",
      "carrer", "via", "viale", "piazza", "corso", "largo", "rua", "travessa", "praça", "av.", "alameda", "ul.",
      "ulica", "al.", "ул.", "улица", "проспект", "пр.", "cadde", "caddesi", "sokak", "sok.", "avenue", "rue");
  /** Post-office boxes: the number follows at once (P.O. Box 1234, Postfach 10 11 12). */
  private static final Set<String> BOX_WORDS = Set.of("p.o. box", "po box", "p.o.box", "postfach", "apartado",
      "caixa postal", "boîte postale", "casella postale", "postbus", "skrytka pocztowa");
  /** Street suffixes of compound names (Hauptstraße, Kerkstraat, Bahnhofplatz), followed by a house number. */
  static final String[] STREET_SUFFIXES = {"straße", "strasse", "str.", "gasse", "allee", "platz", "weg",
      "ring", "damm", "ufer", "straat", "laan", "gracht", "plein", "kade", "steeg", "singel", "vej", "gatan",
      "gata", "katu", "veien"};
  /** CJK address parts after a number: 中山路123号, 1丁目2番3号, 3번지. */
  static final String[] CJK_NUMBERED = {"号", "號", "丁目", "番地", "번지", "번길"};

  private Addresses() {}

  static int[] anchors(NormalizedText t, Keywords.Hits hits, Findings f) {
    Anchors out = new Anchors();
    for (int p : f.postalCodes()) {
      out.add(p);
    }
    String lower = t.lower();
    for (int k = 0; k < hits.count(ProfileKeywords.STREET); k++) {
      int at = hits.start(ProfileKeywords.STREET, k);
      String w = lower.substring(at, hits.end(ProfileKeywords.STREET, k));
      if (wholeWord(lower, at, w) && (numberBefore(lower, at)
          || (NUMBER_AFTER.contains(w) && numberAfter(lower, at + w.length()))
          || (BOX_WORDS.contains(w) && houseNumberAt(lower, skipSpace(lower, at + w.length()))))) {
        out.add(at);
      }
    }
    for (int k = 0; k < hits.count(ProfileKeywords.STREET_SUFFIX); k++) {
      int at = hits.start(ProfileKeywords.STREET_SUFFIX, k);
      if (houseNumberAt(lower, skipSpace(lower, hits.end(ProfileKeywords.STREET_SUFFIX, k)))) {
        out.add(at);
      }
    }
    for (int k = 0; k < hits.count(ProfileKeywords.CJK_NUMBERED); k++) {
      int at = hits.start(ProfileKeywords.CJK_NUMBERED, k);
      if (at > 0 && Chars.isDigit(lower.charAt(at - 1))) {
        out.add(at);
      }
    }
    int[] result = Arrays.copyOf(out.at, out.count);
    Arrays.sort(result);
    return result;
  }

  /**
   * A numbered Chinese or Japanese address with its administrative divisions before it (北京市朝阳区建国路88号,
   * 東京都新宿区西新宿2丁目8番1号): a residence whoever's name it has (names in these scripts have no capitals).
   */
  static boolean cjkResidential(String s, int at) {
    if (at <= 0 || !Chars.isDigit(s.charAt(at - 1))) {
      return false;
    }
    for (int i = Math.max(0, at - 20); i < at; i++) {
      if ("都道府県省市区町村".indexOf(s.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }

  private static final class Anchors {
    int[] at = new int[8];
    int count;

    void add(int p) {
      if (count == at.length) {
        at = Arrays.copyOf(at, count * 2);
      }
      at[count++] = p;
    }
  }

  private static char charAt(String s, int i) {
    return i >= 0 && i < s.length() ? s.charAt(i) : ' ';
  }

  private static boolean wholeWord(String s, int at, String w) {
    boolean endsWithDot = w.endsWith(".") || w.endsWith("/");
    return !Character.isLetterOrDigit(charAt(s, at - 1))
        && (endsWithDot || !Character.isLetterOrDigit(charAt(s, at + w.length())));
  }

  private static int skipSpace(String s, int i) {
    int j = i;
    while (j < s.length() && j - i < 2 && (s.charAt(j) == ' ' || s.charAt(j) == ',')) {
      j++;
    }
    return j;
  }

  /** A house number (1 to 4 digits, perhaps a letter, then not a digit or letter) at {@code i}. */
  private static boolean houseNumberAt(String s, int i) {
    int j = i;
    while (j < s.length() && Chars.isDigit(s.charAt(j)) && j - i < 5) {
      j++;
    }
    if (j == i || j - i > 4 || s.charAt(i) == '0') {
      return false;
    }
    if (j < s.length() && Chars.isAsciiLetter(s.charAt(j))) {
      j++;
    }
    char next = charAt(s, j);
    if (next == '.') {
      return !Chars.isDigit(charAt(s, j + 1));
    }
    return !Character.isLetterOrDigit(next) && next != ':' && next != '%';
  }

  /** A house number starting a word among the (up to four) words before {@code at}: 12 Baker Street. */
  private static boolean numberBefore(String s, int at) {
    int i = at - 1;
    for (int words = 0; words < 5 && i >= 0; words++) {
      while (i >= 0 && (s.charAt(i) == ' ' || s.charAt(i) == ',')) {
        i--;
      }
      int end = i + 1;
      while (i >= 0 && (Character.isLetterOrDigit(s.charAt(i))
          || ((s.charAt(i) == '\'' || s.charAt(i) == '.') && i > 0 && Character.isLetter(s.charAt(i - 1))))) {
        i--;
      }
      if (end - i - 1 > 0 && Chars.isDigit(s.charAt(i + 1)) && houseNumberAt(s, i + 1)
          && (i < 0 || s.charAt(i) == ' ' || s.charAt(i) == ',' || s.charAt(i) == '\n')) {
        return true;
      }
      if (i < 0 || !(s.charAt(i) == ' ')) {
        return false;
      }
    }
    return false;
  }

  /** A house number after up to four words after {@code from}: Calle Mayor 5, Via Roma, 12. */
  private static boolean numberAfter(String s, int from) {
    int i = from;
    for (int words = 0; words < 5 && i < s.length(); words++) {
      while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == ',')) {
        i++;
      }
      if (i < s.length() && Chars.isDigit(s.charAt(i))) {
        return words > 0 && houseNumberAt(s, i);
      }
      int start = i;
      while (i < s.length() && (Character.isLetter(s.charAt(i)) || s.charAt(i) == '\'' || s.charAt(i) == '.')) {
        i++;
      }
      if (i == start || i >= s.length() || (s.charAt(i) != ' ' && s.charAt(i) != ',')) {
        return false;
      }
    }
    return false;
  }

  /**
   * Postal codes beside a city: 5 digits and a capitalised word (10115 Berlin), 4 digits, two letters and a word
   * (1012 AB Amsterdam), 00-950 Warszawa, 01310-100 São Paulo, 1100-148 Lisboa, {@code , IL 62704}, SW1A 1AA: whether
   * one starts at word start {@code i}.
   */
  static boolean postalAt(String s, int i) {
    int n = s.length();
    int j = i;
    while (j < n && Chars.isDigit(s.charAt(j))) {
      j++;
    }
    int len = j - i;
    if (len == 5 && usState(s, i)) {
      return charAt(s, j) != '-' || Chars.isDigit(charAt(s, j + 1));
    }
    if (len == 5 || ((len == 2 || len == 4) && charAt(s, j) == '-' && digitsAt(s, j + 1, 3))) {
      int k = len == 5 ? j : j + 4;
      if (len == 5 && charAt(s, j) == '-' && digitsAt(s, j + 1, 3)) {
        k = j + 4; // 01310-100
      }
      return charAt(s, k) == ' ' && cityAt(s, k + 1);
    }
    if (len == 4 && charAt(s, j) == ' ' && Chars.isUpperAscii(charAt(s, j + 1))
        && Chars.isUpperAscii(charAt(s, j + 2)) && charAt(s, j + 3) == ' ' && cityAt(s, j + 4)) {
      return true; // 1012 AB Amsterdam
    }
    return len == 0 && ukPostcode(s, i);
  }

  private static boolean digitsAt(String s, int i, int n) {
    for (int k = 0; k < n; k++) {
      if (!Chars.isDigit(charAt(s, i + k))) {
        return false;
      }
    }
    return !Chars.isDigit(charAt(s, i + n));
  }

  /** {@code Springfield, IL 62704}: a comma, two capitals, a space, five digits. */
  private static boolean usState(String s, int i) {
    return i >= 4 && s.charAt(i - 1) == ' ' && Chars.isUpperAscii(s.charAt(i - 2))
        && Chars.isUpperAscii(s.charAt(i - 3)) && s.charAt(i - 4) == ' ' && i >= 5 && s.charAt(i - 5) == ',';
  }

  /** A capitalised word of three letters or more (any script with case). */
  private static boolean cityAt(String s, int i) {
    if (i + 3 > s.length() || !Character.isUpperCase(s.charAt(i))) {
      return false;
    }
    return Character.isLowerCase(s.charAt(i + 1)) && Character.isLowerCase(s.charAt(i + 2));
  }

  /** A UK postcode in capitals: A9 9AA, A99 9AA, A9A 9AA, AA9 9AA, AA99 9AA, AA9A 9AA. */
  private static boolean ukPostcode(String s, int i) {
    int j = i;
    int letters = 0;
    while (j < s.length() && Chars.isUpperAscii(s.charAt(j)) && letters < 3) {
      j++;
      letters++;
    }
    if (letters < 1 || letters > 2 || !Chars.isDigit(charAt(s, j))) {
      return false;
    }
    j++;
    if (Chars.isDigit(charAt(s, j)) || Chars.isUpperAscii(charAt(s, j))) {
      j++;
    }
    return charAt(s, j) == ' ' && Chars.isDigit(charAt(s, j + 1)) && Chars.isUpperAscii(charAt(s, j + 2))
        && Chars.isUpperAscii(charAt(s, j + 3)) && !Chars.isAsciiAlnum(charAt(s, j + 4));
  }
}
