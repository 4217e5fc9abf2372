package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Ast.Expr;
import dev.kinference.vllm.template.ExprLexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Parses the tokens of one tag: Jinja2's expressions with its operator precedence, and the token reading
 * {@link TemplateParser} uses for statements. Remembers the names it reads, for macros' {@code varargs},
 * {@code kwargs} and {@code caller}.
 */
final class ExprParser {

  // The tag being parsed.
  List<Token> tokens = List.of();
  int pos;
  int line;
  // Names read so far, to know whether a macro body reads varargs, kwargs or caller.
  java.util.Set<String> namesRead = new java.util.HashSet<>();

  Expr parseTupleOrExpression() {
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
  Expr parseCondless() {
    return parseOr();
  }

  Expr parseOr() {
    Expr e = parseAnd();
    while (acceptKeyword("or")) {
      e = new Ast.Or(e, parseAnd());
    }
    return e;
  }

  Expr parseAnd() {
    Expr e = parseNot();
    while (acceptKeyword("and")) {
      e = new Ast.And(e, parseNot());
    }
    return e;
  }

  Expr parseNot() {
    if (acceptKeyword("not")) {
      return new Ast.Not(parseNot());
    }
    return parseCompare();
  }

  Expr parseCompare() {
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

  Expr parseMath1() {
    Expr e = parseConcat();
    while (peek().is("+") || peek().is("-")) {
      String op = next().text();
      e = new Ast.Binary(op, e, parseConcat());
    }
    return e;
  }

  Expr parseConcat() {
    Expr e = parseMath2();
    while (accept("~")) {
      e = new Ast.Binary("~", e, parseMath2());
    }
    return e;
  }

  Expr parseMath2() {
    Expr e = parsePow();
    while (peek().is("*") || peek().is("/") || peek().is("//") || peek().is("%")) {
      String op = next().text();
      e = new Ast.Binary(op, e, parsePow());
    }
    return e;
  }

  Expr parsePow() {
    Expr e = parseUnary(true);
    while (accept("**")) {
      e = new Ast.Binary("**", e, parseUnary(true));
    }
    return e;
  }

  Expr parseUnary(boolean withFilter) {
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

  Expr parsePrimary() {
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

  Expr parsePostfix(Expr e) {
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

  Expr parseSubscript(Expr target) {
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

  Ast.Call parseCall(Expr function) {
    List<Expr> args = new ArrayList<>();
    List<String> kwNames = new ArrayList<>();
    List<Expr> kwValues = new ArrayList<>();
    parseArgs(args, kwNames, kwValues);
    return new Ast.Call(function, args, kwNames, kwValues);
  }

  /** After '(': arguments up to and including ')'. */
  void parseArgs(List<Expr> args, List<String> kwNames, List<Expr> kwValues) {
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
  Ast.Filter parseFilter(Expr target) {
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

  Expr parseFilterExpr(Expr e) {
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

  void begin(Segments.Segment s) {
    line = s.line();
    tokens = ExprLexer.tokenize(s.content(), s.line());
    pos = 0;
    if (tokens.size() == 1) {
      throw error("empty tag");
    }
  }

  Token peek() {
    return tokens.get(pos);
  }

  Token peekAt(int ahead) {
    return tokens.get(Math.min(tokens.size() - 1, pos + ahead));
  }

  Token next() {
    Token t = tokens.get(pos);
    if (t.type() != ExprLexer.Type.EOF) {
      pos++;
    }
    return t;
  }

  boolean accept(String op) {
    Token t = peek();
    if (t.type() == ExprLexer.Type.OP && t.text().equals(op)) {
      pos++;
      return true;
    }
    return false;
  }

  boolean acceptKeyword(String word) {
    Token t = peek();
    if (t.type() == ExprLexer.Type.NAME && t.text().equals(word)) {
      pos++;
      return true;
    }
    return false;
  }

  void expect(String op) {
    if (!accept(op)) {
      throw error("expected '" + op + "', found '" + peek().text() + "'");
    }
  }

  void expectKeyword(String word) {
    if (!acceptKeyword(word)) {
      throw error("expected '" + word + "', found '" + peek().text() + "'");
    }
  }

  String expectName() {
    Token t = next();
    if (t.type() != ExprLexer.Type.NAME) {
      throw error("expected a name, found '" + t.text() + "'");
    }
    return t.text();
  }

  void expectEnd() {
    if (peek().type() != ExprLexer.Type.EOF) {
      throw error("unexpected '" + peek().text() + "'");
    }
  }

  TemplateException.Unchecked error(String message) {
    return TemplateException.fail("line " + line + ": " + message);
  }
}
