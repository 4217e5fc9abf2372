package dev.kinference.policy.config;

import java.util.Locale;

/** "Did you mean" hints for a misspelt name: the closest known one by edit distance. */
final class Suggestions {

  private Suggestions() {}

  /** {@code " (did you mean 'x'?)"} for the closest known name within a few edits of {@code wrong}, else empty. */
  static String suggest(String wrong, Iterable<String> known) {
    String best = null;
    int bestDist = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(wrong.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
      if (d < bestDist) {
        bestDist = d;
        best = k;
      }
    }
    return best != null && bestDist <= Math.max(2, wrong.length() / 3) ? " (did you mean '" + best + "'?)" : "";
  }

  private static int distance(String a, String b) {
    if (Math.abs(a.length() - b.length()) > 8 || a.length() > 64 || b.length() > 64) {
      return Integer.MAX_VALUE;
    }
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
