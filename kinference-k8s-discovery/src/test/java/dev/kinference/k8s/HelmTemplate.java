package dev.kinference.k8s;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The part of Helm's template language that the chart uses, rendered as Helm renders it: Go's text/template with
 * {@code {{ }}} actions and their {@code {{-} / {@code -}}} whitespace trimming, comments, {@code if / else if /
 * else / end}, {@code range} over a map (sorted keys) or a list, with {@code $key, $value :=} variables and
 * {@code $} for the top-level object, pipelines ({@code x | quote}) and parenthesized calls, fields of
 * {@code .Values}, {@code .Release} and {@code .Chart} (of the element, inside a range), and the functions
 * {@code and or not eq ne lt le gt ge printf} (Go's) and {@code int mul quote default hasPrefix regexMatch
 * required fail toYaml indent nindent} (Sprig's and Helm's). Values read from a values file are numbers as Helm reads them:
 * float64, so that {@code gt .Values.replicas 1} fails here as in Helm ("incompatible types for comparison") and
 * the chart has to write {@code gt (int .Values.replicas) 1}. Anything else ({@code with},
 * {@code define}/{@code include}, other functions) is refused, so the chart cannot use a construct this
 * renderer does not check. {@code HelmChartTest} compares its output with a real {@code helm} where one is
 * installed.
 */
final class HelmTemplate {

  /** A template that Helm would refuse to render, or that calls {@code fail} / {@code required}. */
  static final class RenderException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RenderException(String message) {
      super(message);
    }
  }

  private static final Pattern ACTION =
      Pattern.compile("\\{\\{(-[ \\t\\r\\n])?(.*?)([ \\t\\r\\n]-)?}}", Pattern.DOTALL);

  private sealed interface Node permits Text, Print, If, Range {}

  private record Text(String text) implements Node {}

  private record Print(Expr pipeline, int line) implements Node {}

  /** {@code conditions.get(i)} selects {@code bodies.get(i)}; {@code otherwise} when none holds. */
  private record If(List<Expr> conditions, List<List<Node>> bodies, List<Node> otherwise, int line)
      implements Node {}

  /** {@code range $key, $value := over}: {@code body} per element (with it as dot), {@code otherwise} if none. */
  private record Range(@Nullable String keyVar, @Nullable String valueVar, Expr over, List<Node> body,
      List<Node> otherwise, int line) implements Node {}

  private sealed interface Expr permits Field, Var, Literal, Call {}

  /** {@code .A.b.c}: a path from dot (the top-level object, or a range's element); {@code .} alone is dot. */
  private record Field(List<String> path) implements Expr {}

  /** {@code $name.a.b}: a path from a variable; {@code $} is the top-level object. */
  private record Var(String name, List<String> path) implements Expr {}

  private record Literal(Object value) implements Expr {}

  /** A function call; a pipeline {@code a | f x} is {@code f x a}. */
  private record Call(String function, List<Expr> args) implements Expr {}

  private final String file;
  private final Map<String, Object> top;
  /** What {@code .} is: the top-level object, or inside a range the element. */
  private Object dot;
  /** The variables in scope, {@code $} included. */
  private final Map<String, Object> vars = new LinkedHashMap<>();

  private HelmTemplate(String file, Map<String, Object> top) {
    this.file = file;
    this.top = top;
    this.dot = top;
    vars.put("$", top);
  }

  /**
   * Renders {@code text}; {@code top} holds {@code Values}, {@code Release} and {@code Chart}, with numbers from
   * values files as {@link Double}, as Helm has them.
   */
  static String render(String text, String file, Map<String, Object> top) {
    HelmTemplate t = new HelmTemplate(file, top);
    List<Object> tokens = t.tokenize(text);
    int[] pos = {0};
    List<Node> nodes = t.parseNodes(tokens, pos, true);
    StringBuilder out = new StringBuilder();
    t.execute(nodes, out);
    return out.toString();
  }

  /** A {@code values.yaml} as Helm reads it: numbers become float64. */
  @SuppressWarnings("unchecked")
  static Object asHelmValues(Object yaml) {
    if (yaml instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      ((Map<String, Object>) m).forEach((k, v) -> out.put(k, asHelmValues(v)));
      return out;
    }
    if (yaml instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      l.forEach(v -> out.add(asHelmValues(v)));
      return out;
    }
    if (yaml instanceof Integer || yaml instanceof Long || yaml instanceof BigInteger) {
      return ((Number) yaml).doubleValue();
    }
    return yaml;
  }

  // ---- lexing: text and actions, with trimming applied

  /** The action's text and the line it starts on. */
  private record Action(String body, int line) {}

  private List<Object> tokenize(String text) {
    List<Object> tokens = new ArrayList<>();
    Matcher m = ACTION.matcher(text);
    int last = 0;
    boolean trimNext = false;
    while (m.find()) {
      String before = text.substring(last, m.start());
      if (trimNext) {
        before = before.stripLeading();
      }
      if (m.group(1) != null) {
        before = before.stripTrailing();
      }
      tokens.add(before);
      int line = 1 + (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
      tokens.add(new Action(m.group(2).strip(), line));
      trimNext = m.group(3) != null;
      last = m.end();
    }
    String rest = text.substring(last);
    tokens.add(trimNext ? rest.stripLeading() : rest);
    return tokens;
  }

  // ---- parsing

  private List<Node> parseNodes(List<Object> tokens, int[] pos, boolean topLevel) {
    List<Node> nodes = new ArrayList<>();
    while (pos[0] < tokens.size()) {
      Object token = tokens.get(pos[0]);
      if (token instanceof String s) {
        pos[0]++;
        if (!s.isEmpty()) {
          nodes.add(new Text(s));
        }
        continue;
      }
      Action a = (Action) token;
      String body = a.body();
      if (body.startsWith("/*")) {
        check(body.endsWith("*/"), a.line(), "unterminated comment");
        pos[0]++;
        continue;
      }
      String keyword = body.split("[\\s(]", 2)[0];
      switch (keyword) {
        case "end", "else" -> {
          check(!topLevel, a.line(), "{{ " + keyword + " }} without {{ if }}");
          return nodes;
        }
        case "if" -> {
          pos[0]++;
          nodes.add(parseIf(parseExpr(body.substring(2), a.line()), tokens, pos, a.line()));
        }
        case "range" -> {
          pos[0]++;
          nodes.add(parseRange(body, tokens, pos, a.line()));
        }
        case "with", "define", "template", "block", "break", "continue" ->
            throw error(a.line(), "{{ " + keyword + " }} is beyond what this chart may use");
        default -> {
          pos[0]++;
          nodes.add(new Print(parseExpr(body, a.line()), a.line()));
        }
      }
    }
    check(topLevel, tokens.isEmpty() ? 0 : lineOfEnd(tokens), "{{ if }} without {{ end }}");
    return nodes;
  }

  private static int lineOfEnd(List<Object> tokens) {
    for (int i = tokens.size() - 1; i >= 0; i--) {
      if (tokens.get(i) instanceof Action a) {
        return a.line();
      }
    }
    return 0;
  }

  private If parseIf(Expr first, List<Object> tokens, int[] pos, int line) {
    List<Expr> conditions = new ArrayList<>(List.of(first));
    List<List<Node>> bodies = new ArrayList<>();
    while (true) {
      bodies.add(parseNodes(tokens, pos, false));
      check(pos[0] < tokens.size(), line, "{{ if }} without {{ end }}");
      Action a = (Action) tokens.get(pos[0]);
      pos[0]++;
      if (a.body().equals("end")) {
        return new If(conditions, bodies, List.of(), line);
      }
      if (a.body().equals("else")) {
        List<Node> otherwise = parseNodes(tokens, pos, false);
        check(pos[0] < tokens.size() && ((Action) tokens.get(pos[0])).body().equals("end"), a.line(),
            "{{ else }} without {{ end }}");
        pos[0]++;
        return new If(conditions, bodies, otherwise, line);
      }
      Matcher elseIf = Pattern.compile("else\\s+if\\s(.*)", Pattern.DOTALL).matcher(a.body());
      check(elseIf.matches(), a.line(), "unexpected {{ " + a.body() + " }}");
      conditions.add(parseExpr(elseIf.group(1), a.line()));
    }
  }

  private static final Pattern RANGE =
      Pattern.compile("range\\s+(?:(\\$[A-Za-z0-9_]+)\\s*(?:,\\s*(\\$[A-Za-z0-9_]+)\\s*)?:=\\s*)?(.+)", Pattern.DOTALL);

  private Range parseRange(String body, List<Object> tokens, int[] pos, int line) {
    Matcher m = RANGE.matcher(body);
    check(m.matches(), line, "cannot read {{ " + body + " }}");
    // As in Go: with one variable it is the element; with two, the key (or index) and the element.
    String keyVar = m.group(2) == null ? null : m.group(1);
    String valueVar = m.group(2) == null ? m.group(1) : m.group(2);
    Expr over = parseExpr(m.group(3), line);
    List<Node> loop = parseNodes(tokens, pos, false);
    check(pos[0] < tokens.size(), line, "{{ range }} without {{ end }}");
    Action a = (Action) tokens.get(pos[0]);
    pos[0]++;
    List<Node> otherwise = List.of();
    if (a.body().equals("else")) {
      otherwise = parseNodes(tokens, pos, false);
      check(pos[0] < tokens.size() && ((Action) tokens.get(pos[0])).body().equals("end"), a.line(),
          "{{ else }} without {{ end }}");
      pos[0]++;
    } else {
      check(a.body().equals("end"), a.line(), "unexpected {{ " + a.body() + " }} in {{ range }}");
    }
    return new Range(keyVar, valueVar, over, loop, otherwise, line);
  }

  private Expr parseExpr(String text, int line) {
    List<String> tokens = lex(text, line);
    int[] pos = {0};
    Expr e = parsePipeline(tokens, pos, line);
    check(pos[0] == tokens.size(), line, "unexpected " + (pos[0] < tokens.size() ? tokens.get(pos[0]) : "end"));
    return e;
  }

  private static final Pattern LEXEME = Pattern.compile(
      "\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|[()|]|-?[0-9]+(?:\\.[0-9]+)?|(?:\\.[A-Za-z_][A-Za-z0-9_]*)+"
          + "|\\$[A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*|\\.(?![A-Za-z_])|[A-Za-z_][A-Za-z0-9_]*|\\S)");

  private List<String> lex(String text, int line) {
    List<String> out = new ArrayList<>();
    Matcher m = LEXEME.matcher(text);
    int at = 0;
    while (at < text.length() && !text.substring(at).isBlank()) {
      check(m.find(at) && m.start() == at, line, "cannot read " + text.substring(at));
      out.add(m.group(1));
      at = m.end();
    }
    return out;
  }

  private Expr parsePipeline(List<String> tokens, int[] pos, int line) {
    Expr e = parseCommand(tokens, pos, line);
    while (pos[0] < tokens.size() && tokens.get(pos[0]).equals("|")) {
      pos[0]++;
      Expr next = parseCommand(tokens, pos, line);
      check(next instanceof Call, line, "a pipeline must continue with a function");
      Call c = (Call) next;
      List<Expr> args = new ArrayList<>(c.args());
      args.add(e);
      e = new Call(c.function(), args);
    }
    return e;
  }

  private Expr parseCommand(List<String> tokens, int[] pos, int line) {
    check(pos[0] < tokens.size(), line, "missing value");
    String t = tokens.get(pos[0]);
    if (Character.isLetter(t.charAt(0)) && !List.of("true", "false", "nil").contains(t)) {
      pos[0]++;
      check(FUNCTIONS.contains(t), line, "function " + t + " is beyond what this chart may use");
      List<Expr> args = new ArrayList<>();
      while (pos[0] < tokens.size() && !tokens.get(pos[0]).equals("|") && !tokens.get(pos[0]).equals(")")) {
        args.add(parseOperand(tokens, pos, line));
      }
      return new Call(t, args);
    }
    return parseOperand(tokens, pos, line);
  }

  private static final List<String> FUNCTIONS = List.of("and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge",
      "printf", "int", "mul", "quote", "default", "hasPrefix", "regexMatch", "required", "fail", "toYaml", "indent",
      "nindent");

  private Expr parseOperand(List<String> tokens, int[] pos, int line) {
    String t = tokens.get(pos[0]++);
    if (t.equals("(")) {
      Expr e = parsePipeline(tokens, pos, line);
      check(pos[0] < tokens.size() && tokens.get(pos[0]).equals(")"), line, "missing )");
      pos[0]++;
      return e;
    }
    if (t.equals(".")) {
      return new Field(List.of());
    }
    if (t.startsWith(".")) {
      return new Field(List.of(t.substring(1).split("\\.")));
    }
    if (t.startsWith("$")) {
      String[] parts = t.split("\\.");
      return new Var(parts[0], List.of(parts).subList(1, parts.length));
    }
    if (t.startsWith("\"")) {
      return new Literal(unquote(t, line));
    }
    if (Character.isDigit(t.charAt(0)) || t.charAt(0) == '-') {
      return new Literal(t.contains(".") ? (Object) Double.valueOf(t) : (Object) Long.valueOf(t));
    }
    return switch (t) {
      case "true" -> new Literal(true);
      case "false" -> new Literal(false);
      default -> throw error(line, "unexpected " + t);
    };
  }

  private String unquote(String quoted, int line) {
    StringBuilder sb = new StringBuilder();
    for (int i = 1; i < quoted.length() - 1; i++) {
      char c = quoted.charAt(i);
      if (c == '\\') {
        char e = quoted.charAt(++i);
        sb.append(switch (e) {
          case 'n' -> '\n';
          case 't' -> '\t';
          case '"', '\\' -> e;
          default -> throw error(line, "escape \\" + e);
        });
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  // ---- execution

  private void execute(List<Node> nodes, StringBuilder out) {
    for (Node n : nodes) {
      switch (n) {
        case Text t -> out.append(t.text());
        case Print p -> out.append(print(eval(p.pipeline(), p.line()), p.line()));
        case If i -> {
          List<Node> chosen = i.otherwise();
          for (int k = 0; k < i.conditions().size(); k++) {
            if (truth(eval(i.conditions().get(k), i.line()))) {
              chosen = i.bodies().get(k);
              break;
            }
          }
          execute(chosen, out);
        }
        case Range r -> range(r, out);
      }
    }
  }

  /** Go's range: a map's entries by sorted key, a list's by index; dot and the variables set for the body. */
  private void range(Range r, StringBuilder out) {
    Object over = eval(r.over(), r.line());
    List<Map.Entry<Object, Object>> entries = new ArrayList<>();
    switch (over) {
      case null -> { }
      case Map<?, ?> m -> new java.util.TreeMap<>(m).forEach((k, v) -> entries.add(new java.util.AbstractMap.SimpleEntry<>(k, v)));
      case List<?> l -> {
        for (int i = 0; i < l.size(); i++) {
          entries.add(new java.util.AbstractMap.SimpleEntry<>((long) i, l.get(i)));
        }
      }
      default -> throw error(r.line(), "range can't iterate over " + print(over, r.line()));
    }
    if (entries.isEmpty()) {
      execute(r.otherwise(), out);
      return;
    }
    Object outerDot = dot;
    Map<String, Object> outerVars = new LinkedHashMap<>(vars);
    try {
      for (Map.Entry<Object, Object> e : entries) {
        dot = e.getValue();
        if (r.keyVar() != null) {
          vars.put(r.keyVar(), e.getKey());
        }
        if (r.valueVar() != null) {
          vars.put(r.valueVar(), e.getValue());
        }
        execute(r.body(), out);
      }
    } finally {
      dot = outerDot;
      vars.clear();
      vars.putAll(outerVars);
    }
  }

  @SuppressWarnings("ReferenceEquality") // dot is the top-level object itself outside a range
  private Object eval(Expr e, int line) {
    return switch (e) {
      case Literal l -> l.value();
      case Field f -> {
        if (dot == top && !f.path().isEmpty()) {
          check(List.of("Values", "Release", "Chart").contains(f.path().get(0)), line,
              "unknown field ." + String.join(".", f.path()));
        }
        yield path(dot, "", f.path(), line);
      }
      case Var v -> {
        check(vars.containsKey(v.name()), line, "undefined variable: " + v.name());
        yield path(vars.get(v.name()), v.name(), v.path(), line);
      }
      case Call c -> call(c, line);
    };
  }

  private @Nullable Object path(@Nullable Object from, String start, List<String> path, int line) {
    Object cur = from;
    for (int i = 0; i < path.size(); i++) {
      if (!(cur instanceof Map<?, ?> map)) {
        throw error(line, "nil pointer evaluating " + start + "." + String.join(".", path.subList(0, i + 1)));
      }
      cur = map.get(path.get(i));
    }
    return cur;
  }

  private Object call(Call c, int line) {
    List<Expr> a = c.args();
    switch (c.function()) {
      case "and", "or" -> {
        check(!a.isEmpty(), line, c.function() + " needs arguments");
        Object v = null;
        for (Expr arg : a) {
          v = eval(arg, line);
          if (truth(v) == c.function().equals("or")) {
            return v;
          }
        }
        return v;
      }
      default -> {
        // the other functions evaluate every argument
      }
    }
    List<Object> v = new ArrayList<>();
    a.forEach(x -> v.add(eval(x, line)));
    return switch (c.function()) {
      case "not" -> {
        arity(v, 1, c, line);
        yield !truth(v.get(0));
      }
      case "eq" -> {
        check(v.size() >= 2, line, "eq needs two arguments or more");
        for (Object other : v.subList(1, v.size())) {
          if (compare(v.get(0), other, true, line) == 0) {
            yield true;
          }
        }
        yield false;
      }
      case "ne" -> {
        arity(v, 2, c, line);
        yield compare(v.get(0), v.get(1), true, line) != 0;
      }
      case "lt" -> {
        arity(v, 2, c, line);
        yield compare(v.get(0), v.get(1), false, line) < 0;
      }
      case "le" -> {
        arity(v, 2, c, line);
        yield compare(v.get(0), v.get(1), false, line) <= 0;
      }
      case "gt" -> {
        arity(v, 2, c, line);
        yield compare(v.get(0), v.get(1), false, line) > 0;
      }
      case "ge" -> {
        arity(v, 2, c, line);
        yield compare(v.get(0), v.get(1), false, line) >= 0;
      }
      case "int" -> {
        arity(v, 1, c, line);
        yield toInt(v.get(0));
      }
      case "mul" -> {
        long product = 1;
        for (Object x : v) {
          product *= toInt(x);
        }
        yield product;
      }
      case "quote" -> {
        List<String> quoted = new ArrayList<>();
        for (Object x : v) {
          if (x != null) {
            quoted.add(goQuote(print(x, line)));
          }
        }
        yield String.join(" ", quoted);
      }
      case "default" -> {
        check(v.size() == 1 || v.size() == 2, line, "default needs one or two arguments");
        yield v.size() == 2 && truth(v.get(1)) ? v.get(1) : v.get(0);
      }
      case "hasPrefix" -> {
        arity(v, 2, c, line);
        check(v.get(0) instanceof String && v.get(1) instanceof String, line, "hasPrefix takes strings");
        yield ((String) v.get(1)).startsWith((String) v.get(0));
      }
      case "required" -> {
        arity(v, 2, c, line);
        if (v.get(1) == null || "".equals(v.get(1))) {
          throw new RenderException(String.valueOf(v.get(0)));
        }
        yield v.get(1);
      }
      case "fail" -> {
        arity(v, 1, c, line);
        throw new RenderException(String.valueOf(v.get(0)));
      }
      case "printf" -> {
        check(!v.isEmpty() && v.get(0) instanceof String, line, "printf needs a format");
        yield printf((String) v.get(0), v.subList(1, v.size()), line);
      }
      case "regexMatch" -> {
        arity(v, 2, c, line);
        check(v.get(0) instanceof String && v.get(1) instanceof String, line, "regexMatch takes strings");
        yield Pattern.compile((String) v.get(0)).matcher((String) v.get(1)).find();
      }
      case "toYaml" -> {
        arity(v, 1, c, line);
        yield toYaml(v.get(0));
      }
      case "indent", "nindent" -> {
        arity(v, 2, c, line);
        String pad = " ".repeat((int) toInt(v.get(0)));
        String text = pad + print(v.get(1), line).replace("\n", "\n" + pad);
        yield c.function().equals("nindent") ? "\n" + text : text;
      }
      default -> throw error(line, "function " + c.function());
    };
  }

  /** Go's {@code fmt.Sprintf} for the verbs a chart's messages use: {@code %s %v %d %q %%}. */
  private String printf(String format, List<Object> args, int line) {
    StringBuilder sb = new StringBuilder();
    int next = 0;
    for (int i = 0; i < format.length(); i++) {
      char ch = format.charAt(i);
      if (ch != '%') {
        sb.append(ch);
        continue;
      }
      check(i + 1 < format.length(), line, "printf: a format ending in %");
      char verb = format.charAt(++i);
      if (verb == '%') {
        sb.append('%');
        continue;
      }
      check("svdq".indexOf(verb) >= 0, line, "printf verb %" + verb + " is beyond what this chart may use");
      check(next < args.size(), line, "printf: missing argument");
      String s = print(args.get(next++), line);
      sb.append(verb == 'q' ? goQuote(s) : s);
    }
    check(next == args.size(), line, "printf: extra arguments");
    return sb.toString();
  }

  /**
   * Helm's {@code toYaml}: the value as YAML, keys sorted, no trailing newline ({@code {}} and {@code []} when
   * empty). Only the parsed documents are compared with Helm's, so the layout needs to be valid YAML, not the
   * same text.
   */
  private static String toYaml(@Nullable Object value) {
    if (value == null) {
      return "null";
    }
    org.snakeyaml.engine.v2.api.DumpSettings settings = org.snakeyaml.engine.v2.api.DumpSettings.builder()
        .setDefaultFlowStyle(org.snakeyaml.engine.v2.common.FlowStyle.BLOCK).setWidth(Integer.MAX_VALUE).build();
    String yaml = new org.snakeyaml.engine.v2.api.Dump(settings).dumpToString(sortedForYaml(value));
    return yaml.endsWith("\n") ? yaml.substring(0, yaml.length() - 1) : yaml;
  }

  /** Maps with sorted keys and float64s that hold integers as integers, as Go's YAML writer prints them. */
  private static Object sortedForYaml(Object value) {
    return switch (value) {
      case Map<?, ?> m -> {
        Map<String, Object> out = new java.util.TreeMap<>();
        m.forEach((k, v) -> out.put(String.valueOf(k), v == null ? null : sortedForYaml(v)));
        yield out;
      }
      case List<?> l -> {
        List<Object> out = new ArrayList<>();
        l.forEach(v -> out.add(v == null ? null : sortedForYaml(v)));
        yield out;
      }
      case Double d when d == Math.rint(d) && Math.abs(d) < 1e15 -> d.longValue();
      default -> value;
    };
  }

  private void arity(List<Object> v, int n, Call c, int line) {
    check(v.size() == n, line, c.function() + " takes " + n + " argument(s), given " + v.size());
  }

  /** Go's comparison: equal kinds only (an int is not compared with a float64, as in Helm). */
  private int compare(Object a, Object b, boolean equality, int line) {
    if (a instanceof Long x && b instanceof Long y) {
      return Long.compare(x, y);
    }
    if (a instanceof Double x && b instanceof Double y) {
      return Double.compare(x, y);
    }
    if (a instanceof String x && b instanceof String y) {
      return x.compareTo(y);
    }
    if (equality && a instanceof Boolean x && b instanceof Boolean y) {
      return x.equals(y) ? 0 : 1;
    }
    throw error(line, "incompatible types for comparison: " + kind(a) + " and " + kind(b));
  }

  private static String kind(Object o) {
    return switch (o) {
      case null -> "nil";
      case Long l -> "int";
      case Double d -> "float64";
      case String s -> "string";
      case Boolean b -> "bool";
      case Map<?, ?> m -> "map";
      case List<?> l -> "slice";
      default -> o.getClass().getSimpleName();
    };
  }

  /** Sprig's {@code int} (spf13/cast's ToInt): floats truncated, strings parsed, anything else 0. */
  private static long toInt(Object o) {
    return switch (o) {
      case Long l -> l;
      case Double d -> d.longValue();
      case Boolean b -> b ? 1 : 0;
      case String s -> {
        try {
          yield Long.decode(s.strip());
        } catch (NumberFormatException e) {
          yield 0L;
        }
      }
      case null, default -> 0L;
    };
  }

  /** Go template truth: false, 0, nil and empty strings, maps and lists are false. */
  private static boolean truth(Object o) {
    return switch (o) {
      case null -> false;
      case Boolean b -> b;
      case Long l -> l != 0;
      case Double d -> d != 0;
      case String s -> !s.isEmpty();
      case Map<?, ?> m -> !m.isEmpty();
      case List<?> l -> !l.isEmpty();
      default -> true;
    };
  }

  /** As Go prints a value with {@code {{ }}}; what it would print oddly (1e+06, a map) is refused. */
  private String print(Object o, int line) {
    return switch (o) {
      case null -> throw error(line, "has no value (Helm prints \"<no value>\" or nothing)");
      case String s -> s;
      case Boolean b -> b.toString();
      case Long l -> l.toString();
      case Double d -> {
        check(d == Math.rint(d) && Math.abs(d) < 1e6, line,
            d + " would print in Go's float form (e.g. 1e+06): quote it in the values");
        yield Long.toString(d.longValue());
      }
      case Map<?, ?> m -> throw error(line, "a map must be printed with toYaml, which this chart does not use");
      case List<?> l -> throw error(line, "a list must be printed with toYaml, which this chart does not use");
      default -> throw error(line, "cannot print " + o.getClass());
    };
  }

  /** Go's {@code %q} for the printable strings a chart holds. */
  private static String goQuote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    s.codePoints().forEach(cp -> {
      switch (cp) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        default -> {
          if (cp < 0x20 || cp == 0x7f) {
            sb.append(String.format("\\x%02x", cp));
          } else {
            sb.appendCodePoint(cp);
          }
        }
      }
    });
    return sb.append('"').toString();
  }

  private void check(boolean ok, int line, String message) {
    if (!ok) {
      throw error(line, message);
    }
  }

  private RenderException error(int line, String message) {
    return new RenderException("template: " + file + ":" + line + ": " + message);
  }
}
