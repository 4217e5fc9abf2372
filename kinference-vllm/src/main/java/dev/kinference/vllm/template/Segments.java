package dev.kinference.vllm.template;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cuts template source into text, output ({@code {{ }}}) and statement ({@code {% %}}) segments, applying Jinja2's
 * whitespace control as Hugging Face configures it ({@code trim_blocks=True, lstrip_blocks=True}): the first
 * newline after a block or comment tag is removed, spaces and tabs from the start of a line to a block or comment
 * tag are removed, {@code -} on a tag strips all whitespace on that side, {@code +} disables the automatic rules;
 * line breaks are normalised and a final one dropped first, as Jinja2 does.
 */
final class Segments {

  enum Kind {
    TEXT, OUTPUT, STATEMENT
  }

  record Segment(Kind kind, String content, int line) {}

  private record Raw(char kind, int start, int end, String content, char left, char right, int line) {}

  private static final Pattern ENDRAW = Pattern.compile("\\{%([-+]?)\\s*endraw\\s*([-+]?)%}");

  private Segments() {}

  static List<Segment> split(String source) {
    String src = asJinjaReadsIt(source);
    List<Raw> tags = new ArrayList<>();
    List<int[]> texts = new ArrayList<>(); // [start, end) of the text before each tag, then the tail
    List<String> rawTexts = new ArrayList<>(); // literal text of {% raw %} blocks, by tag index (or null)
    int pos = 0;
    int n = src.length();
    while (true) {
      int start = nextTag(src, pos);
      if (start < 0) {
        texts.add(new int[] {pos, n});
        break;
      }
      texts.add(new int[] {pos, start});
      char kind = src.charAt(start + 1);
      int contentStart = start + 2;
      char left = 0;
      if (contentStart < n && (src.charAt(contentStart) == '-' || src.charAt(contentStart) == '+')) {
        left = src.charAt(contentStart);
        contentStart++;
      }
      int line = lineOf(src, start);
      int close;
      if (kind == '#') {
        close = src.indexOf("#}", contentStart);
        if (close < 0) {
          throw TemplateException.fail("line " + line + ": unterminated comment");
        }
      } else {
        close = findClose(src, contentStart, kind == '{' ? '}' : '%', line);
      }
      char right = 0;
      int contentEnd = close;
      if (close > contentStart && (src.charAt(close - 1) == '-' || src.charAt(close - 1) == '+')) {
        right = src.charAt(close - 1);
        contentEnd = close - 1;
      }
      String content = src.substring(contentStart, Math.max(contentStart, contentEnd));
      int end = close + 2;
      if (kind == '%' && content.strip().equals("raw")) {
        Matcher m = ENDRAW.matcher(src);
        if (!m.find(end)) {
          throw TemplateException.fail("line " + line + ": {% raw %} without {% endraw %}");
        }
        tags.add(new Raw('%', start, end, "raw", left, right, line));
        rawTexts.add(rawText(src.substring(end, m.start()), right, m.group(1)));
        texts.add(new int[] {m.end(), m.end()});
        tags.add(new Raw('%', m.start(), m.end(), "endraw", m.group(1).isEmpty() ? 0 : m.group(1).charAt(0),
            m.group(2).isEmpty() ? 0 : m.group(2).charAt(0), lineOf(src, m.start())));
        rawTexts.add(null);
        pos = m.end();
        continue;
      }
      tags.add(new Raw(kind, start, end, content, left, right, line));
      rawTexts.add(null);
      pos = end;
    }
    // Whitespace control, on offsets into the source.
    for (int i = 0; i < tags.size(); i++) {
      Raw tag = tags.get(i);
      int[] before = texts.get(i);
      int[] after = texts.get(i + 1);
      boolean block = tag.kind() == '%' || tag.kind() == '#';
      if (tag.left() == '-') {
        while (before[1] > before[0] && Character.isWhitespace(src.charAt(before[1] - 1))) {
          before[1]--;
        }
      } else if (block && tag.left() != '+') {
        int lineStart = before[1];
        while (lineStart > before[0] && (src.charAt(lineStart - 1) == ' ' || src.charAt(lineStart - 1) == '\t')) {
          lineStart--;
        }
        if (lineStart == 0 || src.charAt(lineStart - 1) == '\n') {
          before[1] = Math.max(before[0], lineStart);
        }
      }
      if (tag.right() == '-') {
        while (after[0] < after[1] && Character.isWhitespace(src.charAt(after[0]))) {
          after[0]++;
        }
      } else if (block && tag.right() != '+' && after[0] < after[1] && src.charAt(after[0]) == '\n') {
        after[0]++;
      }
    }
    List<Segment> out = new ArrayList<>();
    for (int i = 0; i <= tags.size(); i++) {
      int[] t = texts.get(i);
      if (t[1] > t[0]) {
        out.add(new Segment(Kind.TEXT, src.substring(t[0], t[1]), lineOf(src, t[0])));
      }
      if (i == tags.size()) {
        break;
      }
      Raw tag = tags.get(i);
      String raw = rawTexts.get(i);
      if (raw != null) {
        if (!raw.isEmpty()) {
          out.add(new Segment(Kind.TEXT, raw, tag.line()));
        }
        i++; // the endraw tag; the text after it comes at the top of the next round
        continue;
      }
      switch (tag.kind()) {
        case '{' -> out.add(new Segment(Kind.OUTPUT, tag.content(), tag.line()));
        case '%' -> out.add(new Segment(Kind.STATEMENT, tag.content(), tag.line()));
        default -> {} // comment
      }
    }
    return out;
  }

  /**
   * The source as Jinja2's lexer sees it: every line break ({@code \r\n}, {@code \r}, {@code \n}) becomes
   * {@code \n} and one final line break is dropped ({@code keep_trailing_newline=False}, which transformers keeps).
   */
  static String asJinjaReadsIt(String source) {
    String src = source.indexOf('\r') >= 0 ? source.replace("\r\n", "\n").replace('\r', '\n') : source;
    return src.endsWith("\n") ? src.substring(0, src.length() - 1) : src;
  }

  private static int nextTag(String src, int from) {
    int i = from;
    while (true) {
      i = src.indexOf('{', i);
      if (i < 0 || i + 1 >= src.length()) {
        return -1;
      }
      char c = src.charAt(i + 1);
      if (c == '{' || c == '%' || c == '#') {
        return i;
      }
      i++;
    }
  }

  /**
   * The index of the closing {@code }}} or {@code %}}, skipping string literals and, as Jinja2's lexer does,
   * brackets still open ({@code {{ {'a': {'b': 1}} }}}).
   */
  private static int findClose(String src, int from, char first, int line) {
    int depth = 0;
    int i = from;
    int n = src.length();
    while (i < n - 1) {
      char c = src.charAt(i);
      if (c == '\'' || c == '"') {
        int j = i + 1;
        while (j < n && src.charAt(j) != c) {
          if (src.charAt(j) == '\\') {
            j++;
          }
          j++;
        }
        if (j >= n) {
          throw TemplateException.fail("line " + line + ": unterminated string literal");
        }
        i = j + 1;
        continue;
      }
      if (depth == 0 && c == first && src.charAt(i + 1) == '}') {
        return i;
      }
      if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        depth--;
      }
      i++;
    }
    throw TemplateException.fail("line " + line + ": unterminated tag");
  }

  /**
   * The text of a raw block as Jinja2's lexer cuts it: a '-' closing the raw tag strips the whitespace after it (a
   * plain close keeps the newline: trim_blocks does not apply), a '-' opening the endraw tag the whitespace before
   * it, and with lstrip_blocks a plain endraw tag alone on its line takes that line's indentation.
   */
  private static String rawText(String text, char rawRight, String endrawLeft) {
    int from = 0;
    int to = text.length();
    if (rawRight == '-') {
      while (from < to && Character.isWhitespace(text.charAt(from))) {
        from++;
      }
    }
    if (endrawLeft.equals("-")) {
      while (to > from && Character.isWhitespace(text.charAt(to - 1))) {
        to--;
      }
    } else if (endrawLeft.isEmpty()) {
      int lineStart = to;
      while (lineStart > from && (text.charAt(lineStart - 1) == ' ' || text.charAt(lineStart - 1) == '\t')) {
        lineStart--;
      }
      if (lineStart > from && text.charAt(lineStart - 1) == '\n') {
        to = lineStart;
      }
    }
    return text.substring(from, to);
  }

  private static int lineOf(String src, int offset) {
    int line = 1;
    for (int i = 0; i < offset && i < src.length(); i++) {
      if (src.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }
}
