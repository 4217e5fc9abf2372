package dev.kinference.policy.classify;

/**
 * Secrets: OpenAI/Anthropic-style {@code sk-} keys, Stripe, AWS access key ids, GitHub, GitLab, Slack, Google API,
 * Hugging Face and npm tokens, JSON Web Tokens, PEM private keys. Case-sensitive prefixes on the NFKC text.
 * Hand-written (prefix tables; a scanner such as gitleaks is not a Java library).
 */
final class Secrets {

  private static final String[][] PREFIXES = {
      {"sk-", "20"}, {"sk_live_", "20"}, {"sk_test_", "20"}, {"rk_live_", "20"}, {"ghp_", "30"},
      {"gho_", "30"}, {"ghu_", "30"}, {"ghs_", "30"}, {"ghr_", "30"}, {"github_pat_", "40"}, {"glpat-", "20"},
      {"xoxb-", "15"}, {"xoxp-", "15"}, {"xoxa-", "15"}, {"xoxr-", "15"}, {"xoxs-", "15"}, {"hf_", "30"},
      {"npm_", "36"}};

  private Secrets() {}

  static void find(String s, Findings f) {
    tokens(s, f);
    privateKeys(s, f);
    jwts(s, f);
    urlPasswords(s, f);
  }

  /**
   * A password in a URL ({@code postgres://admin:s3cret@db.example.com/prod}): the user information of a
   * {@code scheme://} URL with a non-empty password that is not a placeholder ({@code ***}, {@code <password>},
   * {@code ${DB_PASSWORD}}, {@code password}).
   */
  private static void urlPasswords(String s, Findings f) {
    int from = 0;
    int scheme;
    while ((scheme = s.indexOf("://", from)) >= 0) {
      int start = scheme + 3;
      int end = start;
      while (end < s.length() && !Character.isWhitespace(s.charAt(end)) && s.charAt(end) != '/'
          && s.charAt(end) != '@' && end - start < 256) {
        end++;
      }
      from = start;
      if (end >= s.length() || s.charAt(end) != '@') {
        continue;
      }
      int colon = s.indexOf(':', start);
      if (colon < 0 || colon >= end - 1) {
        continue;
      }
      String password = s.substring(colon + 1, end);
      String p = password.toLowerCase(java.util.Locale.ROOT);
      boolean placeholder = p.chars().allMatch(c -> c == '*' || c == 'x' || c == '.') || p.startsWith("<")
          || p.startsWith("${") || p.startsWith("{{") || p.startsWith("$") || p.equals("password")
          || p.equals("pass") || p.equals("passwd") || p.equals("secret") || p.equals("changeme");
      if (!placeholder) {
        f.add(PersonalDataKind.SECRET, colon + 1, end);
      }
      from = end;
    }
  }

  private static void tokens(String s, Findings f) {
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
      if (j - i >= 15 && isToken(s, i, j)) {
        f.add(PersonalDataKind.SECRET, i, j);
      }
      i = j;
    }
  }

  private static boolean isWordChar(char c) {
    return Chars.isAsciiAlnum(c) || c == '_' || c == '-';
  }

  private static boolean isToken(String s, int from, int to) {
    int len = to - from;
    if (s.startsWith("AKIA", from) || s.startsWith("ASIA", from)) {
      return len == 20 && allUpperAlnum(s, from + 4, to);
    }
    if (s.startsWith("AIza", from)) {
      return len == 39;
    }
    for (String[] p : PREFIXES) {
      if (s.startsWith(p[0], from)) {
        return len >= Integer.parseInt(p[1]) && mixesLettersAndDigits(s, from + p[0].length(), to);
      }
    }
    return false;
  }

  private static boolean allUpperAlnum(String s, int from, int to) {
    for (int k = from; k < to; k++) {
      char c = s.charAt(k);
      if (!(Chars.isDigit(c) || Chars.isUpperAscii(c))) {
        return false;
      }
    }
    return true;
  }

  private static boolean mixesLettersAndDigits(String s, int from, int to) {
    boolean letter = false;
    boolean digit = false;
    for (int k = from; k < to; k++) {
      char c = s.charAt(k);
      letter |= Chars.isAsciiLetter(c);
      digit |= Chars.isDigit(c);
    }
    return letter && digit;
  }

  private static void privateKeys(String text, Findings f) {
    int from = 0;
    while (true) {
      int begin = text.indexOf("-----BEGIN ", from);
      if (begin < 0) {
        return;
      }
      int close = text.indexOf("-----", begin + 11);
      if (close > 0 && close - begin < 60 && text.substring(begin + 11, close).endsWith("PRIVATE KEY")) {
        f.add(PersonalDataKind.SECRET, begin, close + 5);
      }
      from = begin + 11;
    }
  }

  private static void jwts(String text, Findings f) {
    int from = 0;
    while (true) {
      int start = text.indexOf("eyJ", from);
      if (start < 0) {
        return;
      }
      from = start + 3;
      if (start > 0 && isBase64Url(text.charAt(start - 1))) {
        continue;
      }
      int end1 = segmentEnd(text, start);
      if (end1 - start < 10 || end1 >= text.length() || text.charAt(end1) != '.' || !text.startsWith("eyJ", end1 + 1)) {
        continue;
      }
      int end2 = segmentEnd(text, end1 + 1);
      if (end2 - end1 - 1 < 10 || end2 >= text.length() || text.charAt(end2) != '.') {
        continue;
      }
      int end3 = segmentEnd(text, end2 + 1);
      if (end3 - end2 - 1 >= 10) {
        f.add(PersonalDataKind.SECRET, start, end3);
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
    return Chars.isAsciiAlnum(c) || c == '-' || c == '_';
  }
}
