package dev.kinference.policy.classify;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Many keywords in groups, found in one pass over lower-case text (instead of one {@code indexOf} pass per keyword):
 * keywords are indexed by their first character (last character for suffixes); a keyword starting with an ASCII
 * letter is only tried where a word starts, a suffix only where a word ends. Immutable and thread-safe; {@link
 * #scan} allocates only its result. Hand-written: an Aho-Corasick library (such as {@code org.ahocorasick}) would be
 * a dependency for about a hundred lines and no word-boundary rules.
 */
final class Keywords {

  /** Where the keywords of each group are: per group, pairs of (start, end). */
  static final class Hits {
    private final int[][] spans;
    private final int[] counts;

    Hits(int groups) {
      spans = new int[groups][];
      counts = new int[groups];
    }

    void add(int group, int start, int end) {
      int[] a = spans[group];
      if (a == null) {
        a = new int[8];
      } else if (counts[group] * 2 + 2 > a.length) {
        a = Arrays.copyOf(a, a.length * 2);
      }
      a[counts[group] * 2] = start;
      a[counts[group] * 2 + 1] = end;
      spans[group] = a;
      counts[group]++;
    }

    int count(int group) {
      return counts[group];
    }

    int start(int group, int k) {
      return spans[group][k * 2];
    }

    int end(int group, int k) {
      return spans[group][k * 2 + 1];
    }
  }

  private record Entry(String word, int group, boolean wholeWord) {}

  private final int groups;
  private final Entry[][] byFirstAscii = new Entry[128][];
  /** Keywords whose first two characters are ASCII, by both (128 * first + second). */
  private final Entry[][] byFirstTwoAscii = new Entry[128 * 128][];
  private final Map<Character, Entry[]> byFirstOther = new HashMap<>();
  /** Non-ASCII first or last characters of some keyword: looked up in the maps only when set (no boxing). */
  private final java.util.BitSet otherChars = new java.util.BitSet(65536);
  private final Entry[][] suffixByLast = new Entry[128][];
  private final Map<Character, Entry[]> suffixByLastOther = new HashMap<>();

  /**
   * {@code words[g]} are group g's keywords (lower case); {@code suffix[g]} whether they end words; {@code whole[g]}
   * whether they must also end where a word ends (unless they end with {@code .} or {@code /}).
   */
  Keywords(String[][] words, boolean[] suffix, boolean[] whole) {
    groups = words.length;
    Map<Character, List<Entry>> first = new HashMap<>();
    Map<Character, List<Entry>> last = new HashMap<>();
    for (int g = 0; g < words.length; g++) {
      for (String w : words[g]) {
        Entry e = new Entry(w, g, whole[g] && !w.endsWith(".") && !w.endsWith("/"));
        if (suffix[g]) {
          last.computeIfAbsent(w.charAt(w.length() - 1), c -> new ArrayList<>()).add(e);
        } else {
          first.computeIfAbsent(w.charAt(0), c -> new ArrayList<>()).add(e);
        }
      }
    }
    Map<Integer, List<Entry>> two = new HashMap<>();
    for (Map.Entry<Character, List<Entry>> e : first.entrySet()) {
      List<Entry> rest = new ArrayList<>();
      for (Entry entry : e.getValue()) {
        if (e.getKey() < 128 && entry.word.length() > 1 && entry.word.charAt(1) < 128) {
          two.computeIfAbsent(e.getKey() * 128 + entry.word.charAt(1), k -> new ArrayList<>()).add(entry);
        } else {
          rest.add(entry);
        }
      }
      if (!rest.isEmpty()) {
        put(byFirstAscii, byFirstOther, e.getKey(), rest);
      }
    }
    for (Map.Entry<Integer, List<Entry>> e : two.entrySet()) {
      byFirstTwoAscii[e.getKey()] = e.getValue().toArray(new Entry[0]);
    }
    for (Map.Entry<Character, List<Entry>> e : last.entrySet()) {
      put(suffixByLast, suffixByLastOther, e.getKey(), e.getValue());
    }
  }

  private void put(Entry[][] ascii, Map<Character, Entry[]> other, char c, List<Entry> list) {
    Entry[] a = list.toArray(new Entry[0]);
    if (c < 128) {
      ascii[c] = a;
    } else {
      other.put(c, a);
      otherChars.set(c);
    }
  }

  Hits scan(String lower) {
    Hits hits = new Hits(groups);
    int n = lower.length();
    boolean prevLetter = false;
    boolean letter = n > 0 && isLetterAt(lower, 0);
    for (int i = 0; i < n; i++) {
      char c = lower.charAt(i);
      boolean nextLetter = i + 1 < n && isLetterAt(lower, i + 1);
      boolean other = c >= 128 && otherChars.get(c);
      Entry[] starting = c < 128 ? (prevLetter && letter ? null : byFirstAscii[c]) : other ? byFirstOther.get(c) : null;
      if (starting != null) {
        match(starting, lower, i, hits);
      }
      if (c < 128 && !(prevLetter && letter) && i + 1 < n && lower.charAt(i + 1) < 128) {
        Entry[] two = byFirstTwoAscii[c * 128 + lower.charAt(i + 1)];
        if (two != null) {
          match(two, lower, i, hits);
        }
      }
      if (!nextLetter || c == '.') {
        Entry[] ending = c < 128 ? suffixByLast[c] : other ? suffixByLastOther.get(c) : null;
        if (ending != null) {
          for (Entry e : ending) {
            int from = i + 1 - e.word.length();
            if (from > 0 && lower.startsWith(e.word, from) && isLetterAt(lower, from - 1)) {
              hits.add(e.group, from, i + 1);
            }
          }
        }
      }
      prevLetter = letter;
      letter = nextLetter;
    }
    return hits;
  }

  private static void match(Entry[] entries, String lower, int i, Hits hits) {
    for (Entry e : entries) {
      int end = i + e.word.length();
      if (lower.startsWith(e.word, i) && !(e.wholeWord && end < lower.length()
          && Character.isLetterOrDigit(lower.charAt(end)))) {
        hits.add(e.group, i, end);
      }
    }
  }

  /** A letter, cheaply: ASCII letters, and beyond ASCII anything but punctuation and spaces (Latin-1, general, CJK). */
  private static boolean isLetterAt(String s, int i) {
    char c = s.charAt(i);
    if (c < 128) {
      return Chars.isAsciiLetter(c);
    }
    return c >= 0xC0 && c != 0xD7 && c != 0xF7 && (c < 0x2000 || c > 0x206F) && (c < 0x3000 || c > 0x303F);
  }
}
