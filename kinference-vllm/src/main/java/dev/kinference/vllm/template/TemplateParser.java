package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Ast.Expr;
import dev.kinference.vllm.template.Ast.Node;
import dev.kinference.vllm.template.ExprLexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Parses segments into {@link Ast} nodes, following Jinja2's grammar and operator precedence. */
final class TemplateParser {

  private static final Set<String> UNSUPPORTED = Set.of("include", "import", "from", "extends", "block",
      "autoescape", "do");

  private final List<Segments.Segment> segments;
  private int index;
  // The statement being parsed.
  private List<Token> tokens = List.of();
  private int pos;
  private int line;
  // Names read so far, to know whether a macro body reads varargs, kwargs or caller.
  private java.util.Set<String> namesRead = new java.util.HashSet<>();

  private TemplateParser(List<Segments.Segment> segments) {
    this.segments = segments;
  }

  static List<Node> parse(String source) {
    TemplateParser p = new TemplateParser(Segments.split(source));
    List<Node> body = p.parseBody(Set.of());
    if (p.index < p.segments.size()) {
      Segments.Segment s = p.segments.get(p.index);
      throw TemplateException.fail("line " + s.line() + ": unexpected '" + s.content().strip() + "'");
    }
    return body;
  }

  /** Parses nodes until a statement whose first word is in {@code ends} (left unconsumed). */
  private List<Node> parseBody(Set<String> ends) {
    List<Node> out = new ArrayList<>();
    while (index < segments.size()) {
      Segments.Segment s = segments.get(index);
      switch (s.kind()) {
        case TEXT -> {
          out.add(new Ast.Text(s.content()));
          index++;
        }
        case OUTPUT -> {
          begin(s);
          Expr e = parseExpression();
          expectEnd();
          out.add(new Ast.Output(e, s.line()));
          index++;
        }
        case STATEMENT -> {
          begin(s);
          Token first = tokens.get(0);
          if (first.type() != ExprLexer.Type.NAME) {
            throw error("a statement must start with a keyword");
          }
          if (ends.contains(first.text())) {
            return out;
          }
          index++;
          out.add(parseStatement(first.text()));
        }
      }
    }
    if (!ends.isEmpty()) {
      throw TemplateException.fail("unexpected end of template: missing one of " + new java.util.TreeSet<>(ends));
    }
    return out;
  }

  private Node parseStatement(String keyword) {
    pos = 1;
    return switch (keyword) {
      case "if" -> parseIf();
      case "for" -> parseFor();
      case "set" -> parseSet();
      case "macro" -> parseMacro();
      case "call" -> parseCallBlock();
      case "filter" -> {
        Expr filters = parseFilter(new Ast.Name(Ast.FilterBlock.BODY));
        while (accept("|")) {
          filters = parseFilter(filters);
        }
        expectEnd();
        List<Node> body = parseBody(Set.of("endfilter"));
        closeBlock("endfilter");
        yield new Ast.FilterBlock(filters, body);
      }
      case "with" -> {
        List<String> names = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        while (peek().type() != ExprLexer.Type.EOF) {
          if (!names.isEmpty()) {
            expect(",");
          }
          names.add(expectName());
          expect("=");
          values.add(parseExpression());
        }
        List<Node> body = parseBody(Set.of("endwith"));
        closeBlock("endwith");
        yield new Ast.With(names, values, body);
      }
      case "break" -> {
        expectEnd();
        yield new Ast.Break();
      }
      case "continue" -> {
        expectEnd();
        yield new Ast.Continue();
      }
      case "generation" -> {
        expectEnd();
        List<Node> body = parseBody(Set.of("endgeneration"));
        closeBlock("endgeneration");
        yield new Ast.Transparent(body);
      }
      default -> {
        if (UNSUPPORTED.contains(keyword)) {
          throw error("the '" + keyword + "' statement is not supported by this chat-template engine");
        }
        throw error("unknown statement '" + keyword + "'");
      }
    };
  }

  private Node parseIf() {
    List<Ast.Branch> branches = new ArrayList<>();
    Expr condition = parseExpression();
    expectEnd();
    while (true) {
      List<Node> body = parseBody(Set.of("elif", "else", "endif"));
      branches.add(new Ast.Branch(condition, body));
      Segments.Segment s = segments.get(index);
      begin(s);
      index++;
      String word = tokens.get(0).text();
      pos = 1;
      if (word.equals("elif")) {
        condition = parseExpression();
        expectEnd();
      } else if (word.equals("else")) {
        expectEnd();
        List<Node> otherwise = parseBody(Set.of("endif"));
        closeBlock("endif");
        return new Ast.If(branches, otherwise);
      } else {
        expectEnd();
        return new Ast.If(branches, List.of());
      }
    }
  }

  private Node parseFor() {
    int forLine = line;
    List<String> targets = new ArrayList<>();
    boolean paren = accept("(");
    do {
      targets.add(expectName());
    } while (accept(","));
    if (paren) {
      expect(")");
    }
    expectKeyword("in");
    Expr iterable = parseCondless();
    Expr filter = null;
    if (acceptKeyword("if")) {
      filter = parseExpression();
    }
    if (acceptKeyword("recursive")) {
      throw error("recursive loops are not supported by this chat-template engine");
    }
    expectEnd();
    List<Node> body = parseBody(Set.of("else", "endfor"));
    List<Node> otherwise = List.of();
    Segments.Segment s = segments.get(index);
    begin(s);
    index++;
    if (tokens.get(0).text().equals("else")) {
      pos = 1;
      expectEnd();
      otherwise = parseBody(Set.of("endfor"));
      closeBlock("endfor");
    } else {
      pos = 1;
      expectEnd();
    }
    return new Ast.For(targets, iterable, filter, body, otherwise, forLine);
  }

  private Node parseSet() {
    int setLine = line;
    String first = expectName();
    if (accept(".")) {
      String attribute = expectName();
      expect("=");
      Expr value = parseTupleOrExpression();
      expectEnd();
      return new Ast.Set(List.of(first), attribute, value, setLine);
    }
    List<String> targets = new ArrayList<>();
    targets.add(first);
    while (accept(",")) {
      targets.add(expectName());
    }
    if (peek().type() == ExprLexer.Type.EOF && targets.size() == 1) {
      List<Node> body = parseBody(Set.of("endset"));
      closeBlock("endset");
      return new Ast.SetBlock(first, body);
    }
    expect("=");
    Expr value = parseTupleOrExpression();
    expectEnd();
    return new Ast.Set(targets, null, value, setLine);
  }

  private Node parseMacro() {
    String name = expectName();
    expect("(");
    return parseMacroRest(name, "endmacro");
  }

  /** After the macro's '(': its parameters, the end of the tag, its body and the closing tag. */
  private Ast.Macro parseMacroRest(String name, String end) {
    List<String> params = new ArrayList<>();
    List<@Nullable Expr> defaults = new ArrayList<>();
    if (!accept(")")) {
      do {
        params.add(expectName());
        defaults.add(accept("=") ? parseExpression() : null);
      } while (accept(","));
      expect(")");
    }
    return finishMacro(name, params, defaults, end);
  }

  private Ast.Macro finishMacro(String name, List<String> params, List<@Nullable Expr> defaults, String end) {
    expectEnd();
    java.util.Set<String> outer = namesRead;
    namesRead = new java.util.HashSet<>();
    List<Node> body = parseBody(Set.of(end));
    closeBlock(end);
    Ast.Macro macro = new Ast.Macro(name, params, defaults, body, namesRead.contains("varargs"),
        namesRead.contains("kwargs"));
    outer.addAll(namesRead);
    namesRead = outer;
    return macro;
  }

  private Node parseCallBlock() {
    List<String> params = new ArrayList<>();
    List<@Nullable Expr> defaults = new ArrayList<>();
    if (accept("(")) {
      if (!accept(")")) {
        do {
          params.add(expectName());
          defaults.add(accept("=") ? parseExpression() : null);
        } while (accept(","));
        expect(")");
      }
    }
    Expr call = parseExpression();
    if (!(call instanceof Ast.Call c)) {
      throw error("{% call %} needs a macro call");
    }
    return new Ast.CallBlock(c, finishMacro("caller", params, defaults, "endcall"));
  }

  private void closeBlock(String word) {
    Segments.Segment s = segments.get(index);
    begin(s);
    if (!tokens.get(0).text().equals(word)) {
      throw error("expected " + word);
    }
    index++;
    pos = 1;
    if (peek().type() == ExprLexer.Type.NAME) {
      pos++; // {% endmacro name %}
    }
    expectEnd();
  }

  // ---- expressions ----

  private Expr parseTupleOrExpression() {
    Expr first = parseExpression();
    if (!peek().is(",")) {
      return first;
    }
    List<Expr> items = new ArrayList<>();
    items.add(first);
    while (accept(",")) {
      if (peek().type() == ExprLexer.Type.EOF) {
        break;
      }
      items.add(parseExpression());
    }
    return new Ast.ListExpr(items, true);
  }

  Expr parseExpression() {
    Expr e = parseOr();
    while (acceptKeyword("if")) {
      Expr condition = parseOr();
      Expr no = acceptKeyword("else") ? parseExpression() : null;
      e = new Ast.Cond(condition, e, no);
    }
    return e;
  }

  /** An expression without the conditional form (the iterable of a for loop, before its filter). */
  private Expr parseCondless() {
    return parseOr();
  }

  private Expr parseOr() {
    Expr e = parseAnd();
    while (acceptKeyword("or")) {
      e = new Ast.Or(e, parseAnd());
    }
    return e;
  }

  private Expr parseAnd() {
    Expr e = parseNot();
    while (acceptKeyword("and")) {
      e = new Ast.And(e, parseNot());
    }
    return e;
  }

  private Expr parseNot() {
    if (acceptKeyword("not")) {
      return new Ast.Not(parseNot());
    }
    return parseCompare();
  }

  private Expr parseCompare() {
    Expr first = parseMath1();
    List<String> ops = new ArrayList<>();
    List<Expr> rest = new ArrayList<>();
    while (true) {
      Token t = peek();
      String op;
      if (t.type() == ExprLexer.Type.OP && Set.of("==", "!=", "<", "<=", ">", ">=").contains(t.text())) {
        pos++;
        op = t.text();
      } else if (t.is("in") && t.type() == ExprLexer.Type.NAME) {
        pos++;
        op = "in";
      } else if (t.type() == ExprLexer.Type.NAME && t.text().equals("not") && peekAt(1).type() == ExprLexer.Type.NAME
          && peekAt(1).text().equals("in")) {
        pos += 2;
        op = "not in";
      } else {
        break;
      }
      ops.add(op);
      rest.add(parseMath1());
    }
    return ops.isEmpty() ? first : new Ast.Compare(first, ops, rest);
  }

  private Expr parseMath1() {
    Expr e = parseConcat();
    while (peek().is("+") || peek().is("-")) {
      String op = next().text();
      e = new Ast.Binary(op, e, parseConcat());
    }
    return e;
  }

  private Expr parseConcat() {
    Expr e = parseMath2();
    while (accept("~")) {
      e = new Ast.Binary("~", e, parseMath2());
    }
    return e;
  }

  private Expr parseMath2() {
    Expr e = parsePow();
    while (peek().is("*") || peek().is("/") || peek().is("//") || peek().is("%")) {
      String op = next().text();
      e = new Ast.Binary(op, e, parsePow());
    }
    return e;
  }

  private Expr parsePow() {
    Expr e = parseUnary(true);
    while (accept("**")) {
      e = new Ast.Binary("**", e, parseUnary(true));
    }
    return e;
  }

  private Expr parseUnary(boolean withFilter) {
    Expr e;
    if (accept("-")) {
      e = new Ast.Unary("-", parseUnary(false));
    } else if (accept("+")) {
      e = new Ast.Unary("+", parseUnary(false));
    } else {
      e = parsePostfix(parsePrimary());
    }
    return withFilter ? parseFilterExpr(e) : e;
  }

  private Expr parsePrimary() {
    Token t = next();
    switch (t.type()) {
      case NAME -> {
        return switch (t.text()) {
          case "true", "True" -> new Ast.Literal(true);
          case "false", "False" -> new Ast.Literal(false);
          case "none", "None" -> new Ast.Literal(null);
          default -> {
            namesRead.add(t.text());
            yield new Ast.Name(t.text());
          }
        };
      }
      case STRING -> {
        StringBuilder sb = new StringBuilder((String) t.value());
        while (peek().type() == ExprLexer.Type.STRING) {
          sb.append((String) next().value());
        }
        return new Ast.Literal(sb.toString());
      }
      case INT, FLOAT -> {
        return new Ast.Literal(t.value());
      }
      case OP -> {
        switch (t.text()) {
          case "(" -> {
            if (accept(")")) {
              return new Ast.ListExpr(List.of(), true);
            }
            Expr first = parseExpression();
            if (accept(")")) {
              return first;
            }
            List<Expr> items = new ArrayList<>();
            items.add(first);
            while (accept(",")) {
              if (peek().is(")")) {
                break;
              }
              items.add(parseExpression());
            }
            expect(")");
            return new Ast.ListExpr(items, true);
          }
          case "[" -> {
            List<Expr> items = new ArrayList<>();
            while (!accept("]")) {
              if (!items.isEmpty()) {
                expect(",");
                if (accept("]")) {
                  break;
                }
              }
              items.add(parseExpression());
            }
            return new Ast.ListExpr(items, false);
          }
          case "{" -> {
            List<Expr> keys = new ArrayList<>();
            List<Expr> values = new ArrayList<>();
            while (!accept("}")) {
              if (!keys.isEmpty()) {
                expect(",");
                if (accept("}")) {
                  break;
                }
              }
              keys.add(parseExpression());
              expect(":");
              values.add(parseExpression());
            }
            return new Ast.DictExpr(keys, values);
          }
          default -> throw error("unexpected '" + t.text() + "'");
        }
      }
      default -> throw error("unexpected end of expression");
    }
  }

  private Expr parsePostfix(Expr e) {
    while (true) {
      if (accept(".")) {
        Token t = next();
        if (t.type() == ExprLexer.Type.NAME) {
          e = new Ast.Attr(e, t.text());
        } else if (t.type() == ExprLexer.Type.INT) {
          e = new Ast.Item(e, new Ast.Literal(t.value()));
        } else {
          throw error("expected an attribute name after '.'");
        }
      } else if (accept("[")) {
        e = parseSubscript(e);
      } else if (peek().is("(")) {
        pos++;
        e = parseCall(e);
      } else {
        return e;
      }
    }
  }

  private Expr parseSubscript(Expr target) {
    Expr start = null;
    if (!peek().is(":")) {
      start = parseExpression();
      if (accept("]")) {
        return new Ast.Item(target, start);
      }
    }
    expect(":");
    Expr stop = null;
    Expr step = null;
    if (!peek().is("]") && !peek().is(":")) {
      stop = parseExpression();
    }
    if (accept(":")) {
      if (!peek().is("]")) {
        step = parseExpression();
      }
    }
    expect("]");
    return new Ast.Slice(target, start, stop, step);
  }

  private Ast.Call parseCall(Expr function) {
    List<Expr> args = new ArrayList<>();
    List<String> kwNames = new ArrayList<>();
    List<Expr> kwValues = new ArrayList<>();
    parseArgs(args, kwNames, kwValues);
    return new Ast.Call(function, args, kwNames, kwValues);
  }

  /** After '(': arguments up to and including ')'. */
  private void parseArgs(List<Expr> args, List<String> kwNames, List<Expr> kwValues) {
    while (!accept(")")) {
      if (!args.isEmpty() || !kwNames.isEmpty()) {
        expect(",");
        if (accept(")")) {
          return;
        }
      }
      if (accept("**")) {
        args.add(new Ast.Spread(parseExpression(), true));
        continue;
      }
      if (accept("*")) {
        args.add(new Ast.Spread(parseExpression(), false));
        continue;
      }
      if (peek().type() == ExprLexer.Type.NAME && peekAt(1).is("=") && peekAt(1).type() == ExprLexer.Type.OP) {
        kwNames.add(next().text());
        pos++;
        kwValues.add(parseExpression());
      } else {
        if (!kwNames.isEmpty() || args.stream().anyMatch(x -> x instanceof Ast.Spread s && s.keywords())) {
          throw error("a positional argument follows a keyword argument");
        }
        args.add(parseExpression());
      }
    }
  }

  /** A filter's name and arguments, applied to {@code target}. */
  private Ast.Filter parseFilter(Expr target) {
    String name = expectName();
    while (accept(".")) {
      name = name + "." + expectName();
    }
    List<Expr> args = new ArrayList<>();
    List<String> kwNames = new ArrayList<>();
    List<Expr> kwValues = new ArrayList<>();
    if (accept("(")) {
      parseArgs(args, kwNames, kwValues);
    }
    Filters.require(name, line);
    return new Ast.Filter(target, name, args, kwNames, kwValues);
  }

  private Expr parseFilterExpr(Expr e) {
    while (true) {
      if (accept("|")) {
        e = parseFilter(e);
      } else if (acceptKeyword("is")) {
        boolean negated = acceptKeyword("not");
        String name = expectName();
        while (accept(".")) {
          name = name + "." + expectName();
        }
        List<Expr> args = new ArrayList<>();
        if (accept("(")) {
          List<String> kwNames = new ArrayList<>();
          parseArgs(args, kwNames, new ArrayList<>());
          if (!kwNames.isEmpty()) {
            throw error("keyword arguments to tests are not supported");
          }
        } else {
          Token t = peek();
          boolean argStarts = t.type() == ExprLexer.Type.STRING || t.type() == ExprLexer.Type.INT || t.type() == ExprLexer.Type.FLOAT
              || (t.type() == ExprLexer.Type.NAME && !Set.of("else", "or", "and", "if", "is", "not", "in").contains(t.text()))
              || (t.type() == ExprLexer.Type.OP && (t.text().equals("[") || t.text().equals("{")));
          if (argStarts) {
            args.add(parsePostfix(parsePrimary()));
          }
        }
        Builtins.requireTest(name, line);
        e = new Ast.Test(e, name, args, negated);
      } else if (peek().is("(")) {
        pos++;
        e = parseCall(e);
      } else {
        return e;
      }
    }
  }

  // ---- token helpers ----

  private void begin(Segments.Segment s) {
    line = s.line();
    tokens = ExprLexer.tokenize(s.content(), s.line());
    pos = 0;
    if (tokens.size() == 1) {
      throw error("empty tag");
    }
  }

  private Token peek() {
    return tokens.get(pos);
  }

  private Token peekAt(int ahead) {
    return tokens.get(Math.min(tokens.size() - 1, pos + ahead));
  }

  private Token next() {
    Token t = tokens.get(pos);
    if (t.type() != ExprLexer.Type.EOF) {
      pos++;
    }
    return t;
  }

  private boolean accept(String op) {
    Token t = peek();
    if (t.type() == ExprLexer.Type.OP && t.text().equals(op)) {
      pos++;
      return true;
    }
    return false;
  }

  private boolean acceptKeyword(String word) {
    Token t = peek();
    if (t.type() == ExprLexer.Type.NAME && t.text().equals(word)) {
      pos++;
      return true;
    }
    return false;
  }

  private void expect(String op) {
    if (!accept(op)) {
      throw error("expected '" + op + "', found '" + peek().text() + "'");
    }
  }

  private void expectKeyword(String word) {
    if (!acceptKeyword(word)) {
      throw error("expected '" + word + "', found '" + peek().text() + "'");
    }
  }

  private String expectName() {
    Token t = next();
    if (t.type() != ExprLexer.Type.NAME) {
      throw error("expected a name, found '" + t.text() + "'");
    }
    return t.text();
  }

  private void expectEnd() {
    if (peek().type() != ExprLexer.Type.EOF) {
      throw error("unexpected '" + peek().text() + "'");
    }
  }

  private TemplateException.Unchecked error(String message) {
    return TemplateException.fail("line " + line + ": " + message);
  }
}
