package dev.kinference.policy.classify;

import java.util.Set;

/**
 * E-mail addresses, written plainly ({@code jane.doe@example.com}, full-width after NFKC, percent-encoded after
 * decoding) or obfuscated ({@code john dot doe at gmail dot com}, {@code jane[at]example[dot]org}, {@code (at)},
 * {@code {at}}). A plain address needs a domain with a dot and a letters-only top-level domain that is not a file
 * extension ({@code icon@2x.png}); an obfuscated one needs a known top-level domain. Git's SSH remotes
 * ({@code git@github.com:org/repo.git}) and URL user info ({@code ssh://git@host}) are not addresses. Hand-written:
 * validating libraries (such as Jakarta Mail's {@code InternetAddress}) check one address, they do not find them.
 */
final class Emails {

  private static final Set<String> FILE_EXTENSIONS = Set.of("png", "jpg", "jpeg", "gif", "svg", "webp", "css", "js",
      "json", "yaml", "yml", "txt", "html", "htm", "xml", "pdf", "zip", "gz", "tgz", "java", "py", "kt", "ts", "md",
      "ico", "bmp", "tiff", "mp4", "mp3", "wav", "lock", "toml", "jar", "class", "exe", "dll", "so");
  private static final Set<String> KNOWN_TLDS = Set.of("com", "org", "net", "edu", "gov", "io", "co", "de", "fr",
      "es", "it", "nl", "uk", "pt", "br", "pl", "ru", "cn", "jp", "in", "ae", "sa", "qa", "kw", "ch", "at", "be", "se",
      "no", "dk", "fi", "ie", "us", "ca", "au", "mx", "ar", "tr", "kr", "info", "biz", "me", "eu", "app", "dev",
      "ai", "email", "mail", "online", "gr", "cz", "hu", "ro", "za", "nz", "sg", "hk", "tw", "om", "bh", "eg", "ma");
  private static final Set<String> MAIL_PROVIDERS = Set.of("gmail", "googlemail", "yahoo", "hotmail", "outlook",
      "live", "msn", "icloud", "me", "aol", "gmx", "web", "t-online", "proton", "protonmail", "yandex", "mail", "qq",
      "163", "126", "orange", "free", "laposte", "libero", "virgilio", "wanadoo", "ziggo", "uol", "bol", "terra",
      "rediffmail", "naver", "daum", "seznam", "wp", "o2", "onet", "interia", "zoho", "fastmail", "tutanota");
  /** "at" as people spell it out to hide an address, in the languages of the detector's other families. */
  private static final String[] AT_WORDS = {"at", "arroba", "arobase", "chiocciola", "ät", "собака",
      "apenstaartje"};
  /** "dot", likewise. */
  private static final String[] DOT_WORDS = {"dot", "punkt", "point", "punto", "ponto", "punt", "kropka", "точка",
      "nokta", "prick"};
  /** Obfuscated "at" markers, lower case, surrounded as written. */
  private static final String[] AT_MARKERS = markers(AT_WORDS, " @ ", "[@]", "(@)");
  private static final String[] DOT_MARKERS = markers(DOT_WORDS, " . ", "[.]", "(.)");
  /** First characters after a space that may start an "at" marker (a cheap pre-check of {@link #markerAt}). */
  private static final String AT_STARTS = "a@[({cäс";

  private static String[] markers(String[] words, String... symbols) {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (String w : words) {
      // the bracketed forms first: " (at) " must win over "(at)"
      out.addAll(java.util.List.of(" [" + w + "] ", " (" + w + ") ", " {" + w + "} ", "[" + w + "]", "(" + w + ")",
          "{" + w + "}", "<" + w + ">", " " + w + " "));
    }
    out.addAll(java.util.List.of(symbols));
    return out.toArray(String[]::new);
  }

  private Emails() {}

  static void find(NormalizedText t, Findings f) {
    String s = t.lower();
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      int markerLen = 0;
      if (c == '@') {
        markerLen = 1;
      } else if ((c == ' ' && i + 1 < n && AT_STARTS.indexOf(s.charAt(i + 1)) >= 0) || c == '[' || c == '('
          || c == '{' || c == '<') {
        markerLen = markerAt(s, i, AT_MARKERS);
      }
      if (markerLen == 0) {
        continue;
      }
      boolean plain = c == '@';
      int localStart = localPart(s, i);
      int domainEnd = localStart < 0 ? -1 : domain(s, i + markerLen, plain);
      if (domainEnd > 0 && !gitRemote(s, localStart, i, domainEnd) && !localHost(s, i + markerLen, domainEnd)
          && (!spelledAt(s, i, markerLen) || looksObfuscated(s, localStart, i, markerLen, domainEnd))) {
        f.add(PersonalDataKind.EMAIL, localStart, domainEnd);
        i = domainEnd - 1;
      }
    }
  }

  /** The longest marker at {@code i}, or 0. Markers are checked on their second character first (cheap). */
  private static int markerAt(String s, int i, String[] markers) {
    if (i + 1 >= s.length()) {
      return 0;
    }
    char first = s.charAt(i);
    char second = s.charAt(i + 1);
    int best = 0;
    for (String m : markers) {
      if (m.charAt(1) == second && m.charAt(0) == first && m.length() > best && s.startsWith(m, i)) {
        best = m.length();
      }
    }
    return best;
  }

  private static boolean localChar(char c) {
    return Chars.isAsciiAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
  }

  /** Where the local part before {@code at} starts (words joined by dot markers count), or -1. */
  private static int localPart(String s, int at) {
    int j = at;
    while (true) {
      int k = j;
      while (k > 0 && at - k < 64 && localChar(s.charAt(k - 1))) {
        k--;
      }
      while (k < j && s.charAt(k) == '.') {
        k++;
      }
      if (k == j) {
        return j == at ? -1 : j;
      }
      int dotMarker = dotMarkerEndingAt(s, k);
      if (dotMarker < 0 || at - dotMarker > 64) {
        return k;
      }
      j = dotMarker;
    }
  }

  private static int dotMarkerEndingAt(String s, int end) {
    for (String m : DOT_MARKERS) {
      int from = end - m.length();
      if (from > 0 && s.startsWith(m, from) && localChar(s.charAt(from - 1))) {
        return from;
      }
    }
    return -1;
  }

  /** Where the domain starting at {@code from} ends, or -1 when it is not one. */
  private static int domain(String s, int from, boolean plain) {
    int n = s.length();
    int j = from;
    int labels = 0;
    int lastLabelStart = from;
    while (j < n && j - from < 253) {
      int k = j;
      while (k < n && (Chars.isAsciiAlnum(s.charAt(k)) || s.charAt(k) == '-')) {
        k++;
      }
      if (k == j) {
        break;
      }
      labels++;
      lastLabelStart = j;
      j = k;
      int dot = k < n && s.charAt(k) == '.' && k + 1 < n && Chars.isAsciiAlnum(s.charAt(k + 1)) ? 1
          : markerAt(s, k, DOT_MARKERS);
      if (dot == 0 || (plain && dot > 1) || k + dot >= n || !Chars.isAsciiAlnum(s.charAt(k + dot))) {
        break;
      }
      j = k + dot;
    }
    if (labels < 2) {
      return -1;
    }
    String tld = s.substring(lastLabelStart, j);
    for (int q = 0; q < tld.length(); q++) {
      if (!Chars.isAsciiLetter(tld.charAt(q))) {
        return -1;
      }
    }
    boolean ok = plain ? tld.length() >= 2 && !FILE_EXTENSIONS.contains(tld) : KNOWN_TLDS.contains(tld);
    return ok ? j : -1;
  }

  /**
   * A bare {@code name at domain.tld} needs more than that ({@code I work at example.com} is not an address): a dot
   * marker, a dotted, underscored or numbered local part, or a mail provider's domain.
   */
  private static boolean looksObfuscated(String s, int localStart, int at, int markerLen, int domainEnd) {
    String local = s.substring(localStart, at);
    String domain = s.substring(at + markerLen, domainEnd);
    if (local.contains(".") || local.contains("_") || local.chars().anyMatch(Character::isDigit)
        || domain.contains("[") || domain.contains("(") || spellsDot(local) || spellsDot(domain)) {
      return true;
    }
    String provider = domain.contains(".") ? domain.substring(0, domain.indexOf('.')) : domain;
    return MAIL_PROVIDERS.contains(provider);
  }

  /** A bare spelled-out "at" between spaces ({@code name at domain}), which ordinary prose also writes. */
  private static boolean spelledAt(String s, int i, int markerLen) {
    return s.charAt(i) == ' ' && s.charAt(i + markerLen - 1) == ' ' && Character.isLetter(s.charAt(i + 1));
  }

  private static boolean spellsDot(String part) {
    for (String w : DOT_WORDS) {
      if (part.contains(" " + w + " ") || part.contains("(" + w + ")") || part.contains("[" + w + "]")) {
        return true;
      }
    }
    return false;
  }

  /** A host's own mail ({@code root@localhost}, {@code MAILER-DAEMON@host.localdomain}): no one's address. */
  private static boolean localHost(String s, int domainStart, int domainEnd) {
    String domain = s.substring(domainStart, domainEnd);
    int dot = domain.lastIndexOf('.');
    String tld = dot < 0 ? domain : domain.substring(dot + 1);
    return domain.startsWith("localhost") || tld.equals("localdomain") || tld.equals("local")
        || tld.equals("localhost") || tld.equals("lan") || tld.equals("invalid");
  }

  /** {@code git@github.com:org/repo.git}, {@code ssh://git@host/...}: a remote, not an address. */
  private static boolean gitRemote(String s, int localStart, int at, int domainEnd) {
    if (s.startsWith("git", localStart) && at - localStart == 3) {
      return true;
    }
    if (localStart >= 3 && s.startsWith("://", localStart - 3)) {
      return true;
    }
    return domainEnd + 1 < s.length() && s.charAt(domainEnd) == ':' && !Character.isWhitespace(
        s.charAt(domainEnd + 1));
  }
}
