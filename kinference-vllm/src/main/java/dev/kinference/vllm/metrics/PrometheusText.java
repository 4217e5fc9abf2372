package dev.kinference.vllm.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A parser of the Prometheus text exposition format (version 0.0.4, as vLLM's Python client writes it), strict
 * about what it accepts and explicit about what it rejects:
 *
 * <ul>
 *   <li>lines end with {@code \n} (a trailing {@code \r} is tolerated); blank lines are ignored;</li>
 *   <li>{@code # HELP name text} (escapes {@code \\} and {@code \n}) and {@code # TYPE name type} start a family;
 *       other comments are ignored;</li>
 *   <li>a sample is {@code name[{label="value",...}] value [timestamp]}: names may contain colons; label values
 *       may contain the escapes {@code \\}, {@code \"} and {@code \n}; a trailing comma inside the braces is
 *       allowed; values are floats including {@code NaN}, {@code +Inf}, {@code -Inf} (any case); the timestamp is
 *       an integer in milliseconds, or OpenMetrics' seconds with a fraction; an OpenMetrics exemplar after them
 *       ({@code # {trace_id="..."} 1.0}) is ignored;</li>
 *   <li>histogram, summary and counter samples ({@code _bucket}, {@code _sum}, {@code _count}, {@code _total},
 *       {@code _created}) belong to the family their {@code # TYPE} line declared.</li>
 * </ul>
 * A malformed line raises a {@link PrometheusFormatException} naming its line number, except when the parse is
 * filtered ({@link #parse(CharSequence, java.util.function.Predicate, SampleHandler)}) and the line is about a metric
 * the filter does not want: a scrape is not failed by a metric the router does not read (a line that names no
 * metric still fails).
 *
 * <p>Stateless and thread-safe.
 */
public final class PrometheusText {

  /** No timestamp on the sample. */
  public static final long NO_TIMESTAMP = Long.MIN_VALUE;

  /**
   * One sample line.
   *
   * @param name the sample's name, such as {@code vllm:e2e_request_latency_seconds_bucket}
   * @param labels its labels, in the order written (unmodifiable)
   * @param value its value
   * @param timestampMillis the timestamp, or {@link #NO_TIMESTAMP}
   */
  public record Sample(String name, Map<String, String> labels, double value, long timestampMillis) {
    public Sample {
      Objects.requireNonNull(name, "name");
      labels = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
    }

    /** The label's value, or null. */
    public @Nullable String label(String key) {
      return labels.get(key);
    }
  }

  /**
   * A metric family: the samples declared by one {@code # TYPE} (or one untyped name).
   *
   * @param type {@code counter}, {@code gauge}, {@code histogram}, {@code summary} or {@code untyped}
   * @param help the help text, or an empty string
   */
  public record Family(String name, String type, String help, List<Sample> samples) {
    public Family {
      samples = List.copyOf(samples);
    }
  }

  /** Receives samples as they are parsed. */
  @FunctionalInterface
  public interface SampleHandler {
    /**
     * One sample. {@code labels} holds name/value pairs alternately ({@code labels[2i]} is a name,
     * {@code labels[2i+1]} its value) and is valid only during the call.
     */
    void sample(String name, String[] labels, int labelCount, double value, long timestampMillis);
  }

  private static final String[] SUFFIXES = {"_bucket", "_sum", "_count", "_total", "_created", "_gsum", "_gcount",
      "_info"};

  private PrometheusText() {}

  /** Every sample of {@code text}, in order. */
  public static List<Sample> samples(CharSequence text) {
    List<Sample> out = new ArrayList<>();
    parse(text, (name, labels, count, value, ts) -> out.add(new Sample(name, toMap(labels, count), value, ts)));
    return out;
  }

  /** The families of {@code text} by name, in order of appearance. */
  public static Map<String, Family> families(CharSequence text) {
    Map<String, String> types = new LinkedHashMap<>();
    Map<String, String> helps = new LinkedHashMap<>();
    Map<String, List<Sample>> samples = new LinkedHashMap<>();
    new Parser(text, (name, labels, count, value, ts) -> {
      String family = familyOf(name, types);
      samples.computeIfAbsent(family, k -> new ArrayList<>())
          .add(new Sample(name, toMap(labels, count), value, ts));
    }, types, helps).run();
    Map<String, Family> out = new LinkedHashMap<>();
    for (String name : types.keySet()) {
      out.put(name, new Family(name, types.get(name), helps.getOrDefault(name, ""),
          samples.getOrDefault(name, List.of())));
    }
    samples.forEach((name, list) -> out.computeIfAbsent(name,
        n -> new Family(n, "untyped", helps.getOrDefault(n, ""), list)));
    return out;
  }

  /** Parses {@code text}, handing each sample to {@code handler}; allocates a string per name and label. */
  public static void parse(CharSequence text, SampleHandler handler) {
    new Parser(text, handler, null, null).run();
  }

  /**
   * Parses {@code text}, handing to {@code handler} the samples whose name {@code wanted} accepts. The rest of a
   * line whose name is not wanted is skipped unchecked: this is for scrapers that read a few metrics of a large
   * page.
   */
  public static void parse(CharSequence text, java.util.function.Predicate<String> wanted, SampleHandler handler) {
    Parser p = new Parser(text, handler, null, null);
    p.wanted = wanted;
    p.run();
  }

  private static String familyOf(String sample, Map<String, String> types) {
    if (types.containsKey(sample)) {
      return sample;
    }
    for (String suffix : SUFFIXES) {
      if (sample.endsWith(suffix)) {
        String base = sample.substring(0, sample.length() - suffix.length());
        if (types.containsKey(base)) {
          return base;
        }
      }
    }
    return sample;
  }

  private static Map<String, String> toMap(String[] labels, int count) {
    if (count == 0) {
      return Map.of();
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      m.put(labels[2 * i], labels[2 * i + 1]);
    }
    return m;
  }

  /** One pass over the text. */
  private static final class Parser {
    private final CharSequence s;
    private final SampleHandler handler;
    private final @Nullable Map<String, String> types;
    private final @Nullable Map<String, String> helps;
    private final int end;
    private int pos;
    private int line = 1;
    private String[] labels = new String[16];
    private final StringBuilder sb = new StringBuilder();
    private java.util.function.@Nullable Predicate<String> wanted;

    Parser(CharSequence s, SampleHandler handler, @Nullable Map<String, String> types,
        @Nullable Map<String, String> helps) {
      this.s = s;
      this.handler = handler;
      this.types = types;
      this.helps = helps;
      this.end = s.length();
    }

    void run() {
      String str = s instanceof String text ? text : null;
      while (pos < end) {
        int lineEnd;
        if (str != null) {
          lineEnd = str.indexOf('\n', pos);
          if (lineEnd < 0) {
            lineEnd = end;
          }
        } else {
          lineEnd = pos;
          while (lineEnd < end && s.charAt(lineEnd) != '\n') {
            lineEnd++;
          }
        }
        int contentEnd = lineEnd > pos && s.charAt(lineEnd - 1) == '\r' ? lineEnd - 1 : lineEnd;
        int lineStart = pos;
        try {
          parseLine(contentEnd);
        } catch (PrometheusFormatException e) {
          // A scraper reading a few metrics is not failed by a bad line of a metric it does not read; a line that
          // names no metric at all (an HTML page, say) still fails: the page is not metrics.
          java.util.function.Predicate<String> filter = wanted;
          String name = filter == null ? null : nameOf(lineStart, contentEnd);
          if (name == null || filter == null || filter.test(name)) {
            throw e;
          }
        }
        pos = lineEnd + 1;
        line++;
      }
    }

    /** The metric a line is about (a sample's name, or the name after # HELP / # TYPE), or null. */
    private @Nullable String nameOf(int from, int to) {
      int i = from;
      while (i < to && isBlank(s.charAt(i))) {
        i++;
      }
      if (i < to && s.charAt(i) == '#') {
        i++;
        while (i < to && isBlank(s.charAt(i))) {
          i++;
        }
        while (i < to && !isBlank(s.charAt(i))) {
          i++; // HELP or TYPE
        }
        while (i < to && isBlank(s.charAt(i))) {
          i++;
        }
      }
      int start = i;
      while (i < to && isNamePart(s.charAt(i), true)) {
        i++;
      }
      return i > start ? s.subSequence(start, i).toString() : null;
    }

    private void parseLine(int lineEnd) {
      skipBlanks(lineEnd);
      if (pos >= lineEnd) {
        return;
      }
      if (s.charAt(pos) == '#') {
        comment(lineEnd);
        return;
      }
      String name = metricName(lineEnd);
      java.util.function.Predicate<String> filter = wanted;
      if (filter != null && !filter.test(name)) {
        return;
      }
      int count = 0;
      boolean spaced = skipBlanks(lineEnd);
      if (pos < lineEnd && s.charAt(pos) == '{') {
        pos++;
        while (true) {
          skipBlanks(lineEnd);
          if (pos >= lineEnd) {
            throw fail("unterminated label set");
          }
          if (s.charAt(pos) == '}') {
            pos++;
            break;
          }
          String labelName = labelName(lineEnd);
          skipBlanks(lineEnd);
          expect('=', lineEnd);
          skipBlanks(lineEnd);
          String labelValue = quoted(lineEnd);
          if (2 * count + 2 > labels.length) {
            labels = java.util.Arrays.copyOf(labels, labels.length * 2);
          }
          labels[2 * count] = labelName;
          labels[2 * count + 1] = labelValue;
          count++;
          skipBlanks(lineEnd);
          if (pos < lineEnd && s.charAt(pos) == ',') {
            pos++;
          } else if (pos < lineEnd && s.charAt(pos) == '}') {
            pos++;
            break;
          } else {
            throw fail("expected ',' or '}' after label " + labelName);
          }
        }
        spaced = skipBlanks(lineEnd);
      }
      if (!spaced && pos < lineEnd) {
        throw fail("expected a space before the value");
      }
      double value = value(lineEnd);
      long ts = NO_TIMESTAMP;
      spaced = skipBlanks(lineEnd);
      if (pos < lineEnd && s.charAt(pos) != '#') {
        if (!spaced) {
          throw fail("expected a space before the timestamp");
        }
        ts = timestamp(lineEnd);
        spaced = skipBlanks(lineEnd);
      }
      // an OpenMetrics exemplar (" # {trace_id=\"...\"} 1.0 [timestamp]") says nothing the router reads
      if (pos < lineEnd && !(spaced && s.charAt(pos) == '#')) {
        throw fail("unexpected text after the " + (ts == NO_TIMESTAMP ? "value" : "timestamp"));
      }
      handler.sample(name, labels, count, value, ts);
    }

    private void comment(int lineEnd) {
      pos++;
      if (!skipBlanks(lineEnd)) {
        return;
      }
      int wordStart = pos;
      while (pos < lineEnd && !isBlank(s.charAt(pos))) {
        pos++;
      }
      String word = s.subSequence(wordStart, pos).toString();
      boolean help = word.equals("HELP");
      if (!help && !word.equals("TYPE")) {
        return;
      }
      if (!skipBlanks(lineEnd)) {
        throw fail("# " + word + " needs a metric name");
      }
      String name = metricName(lineEnd);
      skipBlanks(lineEnd);
      if (help) {
        String text = unescapeHelp(lineEnd);
        if (helps != null) {
          helps.putIfAbsent(name, text);
        }
      } else {
        String type = s.subSequence(pos, lineEnd).toString().strip();
        switch (type) {
          case "counter", "gauge", "histogram", "summary", "untyped", "info", "stateset", "gaugehistogram",
              "unknown" -> {}
          default -> throw fail("unknown metric type '" + type + "'");
        }
        if (types != null) {
          if (types.containsKey(name)) {
            throw fail("second # TYPE line for " + name);
          }
          types.put(name, type);
        }
      }
    }

    /** HELP text knows two escapes, {@code \\} and {@code \n}; any other backslash is kept as written. */
    private String unescapeHelp(int lineEnd) {
      sb.setLength(0);
      while (pos < lineEnd) {
        char c = s.charAt(pos++);
        if (c == '\\' && pos < lineEnd && (s.charAt(pos) == '\\' || s.charAt(pos) == 'n')) {
          sb.append(s.charAt(pos++) == 'n' ? '\n' : '\\');
        } else {
          sb.append(c);
        }
      }
      return sb.toString();
    }

    private String metricName(int lineEnd) {
      int start = pos;
      if (pos < lineEnd && isNameStart(s.charAt(pos), true)) {
        pos++;
        while (pos < lineEnd && isNamePart(s.charAt(pos), true)) {
          pos++;
        }
      }
      if (pos == start) {
        throw fail("expected a metric name");
      }
      return s.subSequence(start, pos).toString();
    }

    private String labelName(int lineEnd) {
      int start = pos;
      if (pos < lineEnd && s.charAt(pos) == '"') {
        return quoted(lineEnd);
      }
      if (pos < lineEnd && isNameStart(s.charAt(pos), false)) {
        pos++;
        while (pos < lineEnd && isNamePart(s.charAt(pos), false)) {
          pos++;
        }
      }
      if (pos == start) {
        throw fail("expected a label name");
      }
      return s.subSequence(start, pos).toString();
    }

    private String quoted(int lineEnd) {
      expect('"', lineEnd);
      int start = pos;
      // Fast path: no escapes.
      while (pos < lineEnd) {
        char c = s.charAt(pos);
        if (c == '"') {
          String v = s.subSequence(start, pos).toString();
          pos++;
          return v;
        }
        if (c == '\\') {
          break;
        }
        pos++;
      }
      sb.setLength(0);
      sb.append(s, start, pos);
      while (pos < lineEnd) {
        char c = s.charAt(pos++);
        if (c == '"') {
          return sb.toString();
        }
        if (c == '\\') {
          if (pos >= lineEnd) {
            break;
          }
          char n = s.charAt(pos++);
          switch (n) {
            case '\\' -> sb.append('\\');
            case '"' -> sb.append('"');
            case 'n' -> sb.append('\n');
            default -> throw fail("invalid escape \\" + n + " in a label value");
          }
        } else {
          sb.append(c);
        }
      }
      throw fail("unterminated label value");
    }

    private double value(int lineEnd) {
      int start = pos;
      while (pos < lineEnd && !isBlank(s.charAt(pos))) {
        pos++;
      }
      if (pos == start) {
        throw fail("expected a value");
      }
      return parseValue(s, start, pos);
    }

    private double parseValue(CharSequence text, int from, int to) {
      int len = to - from;
      char first = text.charAt(from);
      if (len <= 4 && (first == 'N' || first == 'n' || first == '+' || first == '-' || first == 'I'
          || first == 'i')) {
        String word = text.subSequence(from, to).toString();
        if (word.equalsIgnoreCase("NaN")) {
          return Double.NaN;
        }
        if (word.equalsIgnoreCase("+Inf") || word.equalsIgnoreCase("Inf")) {
          return Double.POSITIVE_INFINITY;
        }
        if (word.equalsIgnoreCase("-Inf")) {
          return Double.NEGATIVE_INFINITY;
        }
      }
      // Common case: a plain integer, as most counters and gauges are.
      boolean negative = first == '-';
      int i = negative || first == '+' ? from + 1 : from;
      if (i < to && to - i <= 15) {
        long v = 0;
        int j = i;
        while (j < to && text.charAt(j) >= '0' && text.charAt(j) <= '9') {
          v = v * 10 + (text.charAt(j) - '0');
          j++;
        }
        if (j == to) {
          return negative ? -(double) v : (double) v;
        }
        if (text.charAt(j) == '.' && j + 2 == to && text.charAt(j + 1) == '0') {
          return negative ? -(double) v : (double) v; // "12.0", as Python writes floats that are whole numbers
        }
      }
      String word = text.subSequence(from, to).toString();
      for (int k = 0; k < word.length(); k++) {
        char c = word.charAt(k);
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
          throw fail("invalid value '" + word + "'");
        }
      }
      try {
        return Double.parseDouble(word);
      } catch (NumberFormatException e) {
        throw fail("invalid value '" + word + "'");
      }
    }

    private long timestamp(int lineEnd) {
      int start = pos;
      while (pos < lineEnd && !isBlank(s.charAt(pos))) {
        pos++;
      }
      String word = s.subSequence(start, pos).toString();
      try {
        if (word.indexOf('.') >= 0 || word.indexOf('e') >= 0 || word.indexOf('E') >= 0) {
          // OpenMetrics writes seconds, possibly fractional; the text format 0.0.4 integer milliseconds
          double seconds = Double.parseDouble(word);
          if (!Double.isFinite(seconds)) {
            throw new NumberFormatException(word);
          }
          return Math.round(seconds * 1000);
        }
        return Long.parseLong(word);
      } catch (NumberFormatException e) {
        throw fail("invalid timestamp '" + word + "'");
      }
    }

    private void expect(char c, int lineEnd) {
      if (pos >= lineEnd || s.charAt(pos) != c) {
        throw fail("expected '" + c + "'");
      }
      pos++;
    }

    /** Skips spaces and tabs; returns whether there were any. */
    private boolean skipBlanks(int lineEnd) {
      int start = pos;
      while (pos < lineEnd && isBlank(s.charAt(pos))) {
        pos++;
      }
      return pos > start;
    }

    private PrometheusFormatException fail(String reason) {
      return new PrometheusFormatException("line " + line + ": " + reason);
    }

    private static boolean isBlank(char c) {
      return c == ' ' || c == '\t';
    }

    private static boolean isNameStart(char c, boolean colonAllowed) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colonAllowed && c == ':');
    }

    private static boolean isNamePart(char c, boolean colonAllowed) {
      return isNameStart(c, colonAllowed) || (c >= '0' && c <= '9');
    }
  }
}
