package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Ast.Expr;
import dev.kinference.vllm.template.Ast.Node;
import dev.kinference.vllm.template.ExprLexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Parses segments into {@link Ast} nodes: Jinja2's statements, each tag's expressions read by {@link ExprParser}. */
final class TemplateParser {

  private static final Set<String> UNSUPPORTED = Set.of("include", "import", "from", "extends", "block",
      "autoescape", "do");

  private final List<Segments.Segment> segments;
  private int index;
  private final ExprParser tag = new ExprParser();

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
          tag.begin(s);
          Expr e = tag.parseExpression();
          tag.expectEnd();
          out.add(new Ast.Output(e, s.line()));
          index++;
        }
        case STATEMENT -> {
          tag.begin(s);
          Token first = tag.tokens.get(0);
          if (first.type() != ExprLexer.Type.NAME) {
            throw tag.error("a statement must start with a keyword");
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
    tag.pos = 1;
    return switch (keyword) {
      case "if" -> parseIf();
      case "for" -> parseFor();
      case "set" -> parseSet();
      case "macro" -> parseMacro();
      case "call" -> parseCallBlock();
      case "filter" -> {
        Expr filters = tag.parseFilter(new Ast.Name(Ast.FilterBlock.BODY));
        while (tag.accept("|")) {
          filters = tag.parseFilter(filters);
        }
        tag.expectEnd();
        List<Node> body = parseBody(Set.of("endfilter"));
        closeBlock("endfilter");
        yield new Ast.FilterBlock(filters, body);
      }
      case "with" -> {
        List<String> names = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        while (tag.peek().type() != ExprLexer.Type.EOF) {
          if (!names.isEmpty()) {
            tag.expect(",");
          }
          names.add(tag.expectName());
          tag.expect("=");
          values.add(tag.parseExpression());
        }
        List<Node> body = parseBody(Set.of("endwith"));
        closeBlock("endwith");
        yield new Ast.With(names, values, body);
      }
      case "break" -> {
        tag.expectEnd();
        yield new Ast.Break();
      }
      case "continue" -> {
        tag.expectEnd();
        yield new Ast.Continue();
      }
      case "generation" -> {
        tag.expectEnd();
        List<Node> body = parseBody(Set.of("endgeneration"));
        closeBlock("endgeneration");
        yield new Ast.Transparent(body);
      }
      default -> {
        if (UNSUPPORTED.contains(keyword)) {
          throw tag.error("the '" + keyword + "' statement is not supported by this chat-template engine");
        }
        throw tag.error("unknown statement '" + keyword + "'");
      }
    };
  }

  private Node parseIf() {
    List<Ast.Branch> branches = new ArrayList<>();
    Expr condition = tag.parseExpression();
    tag.expectEnd();
    while (true) {
      List<Node> body = parseBody(Set.of("elif", "else", "endif"));
      branches.add(new Ast.Branch(condition, body));
      Segments.Segment s = segments.get(index);
      tag.begin(s);
      index++;
      String word = tag.tokens.get(0).text();
      tag.pos = 1;
      if (word.equals("elif")) {
        condition = tag.parseExpression();
        tag.expectEnd();
      } else if (word.equals("else")) {
        tag.expectEnd();
        List<Node> otherwise = parseBody(Set.of("endif"));
        closeBlock("endif");
        return new Ast.If(branches, otherwise);
      } else {
        tag.expectEnd();
        return new Ast.If(branches, List.of());
      }
    }
  }

  private Node parseFor() {
    int forLine = tag.line;
    List<String> targets = new ArrayList<>();
    boolean paren = tag.accept("(");
    do {
      targets.add(tag.expectName());
    } while (tag.accept(","));
    if (paren) {
      tag.expect(")");
    }
    tag.expectKeyword("in");
    Expr iterable = tag.parseCondless();
    Expr filter = null;
    if (tag.acceptKeyword("if")) {
      filter = tag.parseExpression();
    }
    if (tag.acceptKeyword("recursive")) {
      throw tag.error("recursive loops are not supported by this chat-template engine");
    }
    tag.expectEnd();
    List<Node> body = parseBody(Set.of("else", "endfor"));
    List<Node> otherwise = List.of();
    Segments.Segment s = segments.get(index);
    tag.begin(s);
    index++;
    if (tag.tokens.get(0).text().equals("else")) {
      tag.pos = 1;
      tag.expectEnd();
      otherwise = parseBody(Set.of("endfor"));
      closeBlock("endfor");
    } else {
      tag.pos = 1;
      tag.expectEnd();
    }
    return new Ast.For(targets, iterable, filter, body, otherwise, forLine);
  }

  private Node parseSet() {
    int setLine = tag.line;
    String first = tag.expectName();
    if (tag.accept(".")) {
      String attribute = tag.expectName();
      tag.expect("=");
      Expr value = tag.parseTupleOrExpression();
      tag.expectEnd();
      return new Ast.Set(List.of(first), attribute, value, setLine);
    }
    List<String> targets = new ArrayList<>();
    targets.add(first);
    while (tag.accept(",")) {
      targets.add(tag.expectName());
    }
    if (targets.size() == 1 && (tag.peek().type() == ExprLexer.Type.EOF || tag.accept("|"))) {
      Expr filters = null;
      if (tag.peek().type() != ExprLexer.Type.EOF) {
        filters = tag.parseFilter(new Ast.Name(Ast.FilterBlock.BODY));
        while (tag.accept("|")) {
          filters = tag.parseFilter(filters);
        }
        tag.expectEnd();
      }
      List<Node> body = parseBody(Set.of("endset"));
      closeBlock("endset");
      return new Ast.SetBlock(first, filters, body);
    }
    tag.expect("=");
    Expr value = tag.parseTupleOrExpression();
    tag.expectEnd();
    return new Ast.Set(targets, null, value, setLine);
  }

  private Node parseMacro() {
    String name = tag.expectName();
    tag.expect("(");
    return parseMacroRest(name, "endmacro");
  }

  /** After the macro's '(': its parameters, the end of the tag, its body and the closing tag. */
  private Ast.Macro parseMacroRest(String name, String end) {
    List<String> params = new ArrayList<>();
    List<@Nullable Expr> defaults = new ArrayList<>();
    if (!tag.accept(")")) {
      do {
        params.add(tag.expectName());
        defaults.add(tag.accept("=") ? tag.parseExpression() : null);
      } while (tag.accept(","));
      tag.expect(")");
    }
    return finishMacro(name, params, defaults, end);
  }

  private Ast.Macro finishMacro(String name, List<String> params, List<@Nullable Expr> defaults, String end) {
    tag.expectEnd();
    java.util.Set<String> outer = tag.namesRead;
    tag.namesRead = new java.util.HashSet<>();
    List<Node> body = parseBody(Set.of(end));
    closeBlock(end);
    Ast.Macro macro = new Ast.Macro(name, params, defaults, body, tag.namesRead.contains("varargs"),
        tag.namesRead.contains("kwargs"));
    outer.addAll(tag.namesRead);
    tag.namesRead = outer;
    return macro;
  }

  private Node parseCallBlock() {
    List<String> params = new ArrayList<>();
    List<@Nullable Expr> defaults = new ArrayList<>();
    if (tag.accept("(")) {
      if (!tag.accept(")")) {
        do {
          params.add(tag.expectName());
          defaults.add(tag.accept("=") ? tag.parseExpression() : null);
        } while (tag.accept(","));
        tag.expect(")");
      }
    }
    Expr call = tag.parseExpression();
    if (!(call instanceof Ast.Call c)) {
      throw tag.error("{% call %} needs a macro call");
    }
    return new Ast.CallBlock(c, finishMacro("caller", params, defaults, "endcall"));
  }

  private void closeBlock(String word) {
    Segments.Segment s = segments.get(index);
    tag.begin(s);
    if (!tag.tokens.get(0).text().equals(word)) {
      throw tag.error("expected " + word);
    }
    index++;
    tag.pos = 1;
    if (tag.peek().type() == ExprLexer.Type.NAME) {
      tag.pos++; // {% endmacro name %}
    }
    tag.expectEnd();
  }
}
