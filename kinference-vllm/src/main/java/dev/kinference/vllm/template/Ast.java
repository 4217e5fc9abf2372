package dev.kinference.vllm.template;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** The parsed template: statements and expressions. */
final class Ast {

  private Ast() {}

  sealed interface Node permits Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, With, Break,
      Continue, Transparent {}

  record Text(String text) implements Node {}

  record Output(Expr expr, int line) implements Node {}

  record Branch(Expr condition, List<Node> body) {}

  record If(List<Branch> branches, List<Node> otherwise) implements Node {}

  record For(List<String> targets, Expr iterable, @Nullable Expr filter, List<Node> body, List<Node> otherwise,
      int line) implements Node {}

  /** {@code set name = v}, {@code set a, b = v} or {@code set ns.attr = v}. */
  record Set(List<String> targets, @Nullable String attribute, Expr value, int line) implements Node {}

  /** {@code {% set x | f %}body{% endset %}}: the rendered body, through the filters when there are any. */
  record SetBlock(String target, @Nullable Expr filters, List<Node> body) implements Node {}

  /**
   * A macro; {@code varargs} and {@code kwargs} say whether its body reads those names, which lets it take extra
   * positional and keyword arguments, as in Jinja2.
   */
  record Macro(String name, List<String> params, List<@Nullable Expr> defaults, List<Node> body, boolean varargs,
      boolean kwargs) implements Node {}

  /** {@code {% call(params) macro(args) %}body{% endcall %}}: calls the macro with the body as {@code caller}. */
  record CallBlock(Call call, Macro caller) implements Node {}

  /** {@code {% filter f | g %}body{% endfilter %}}: the filters applied to the rendered body, named {@link #BODY}. */
  record FilterBlock(Expr filters, List<Node> body) implements Node {
    static final String BODY = " filter body"; // no template can write this name
  }

  /** {@code {% with a = 1, b = 2 %}body{% endwith %}}: the body in a scope with those names. */
  record With(List<String> names, List<Expr> values, List<Node> body) implements Node {}

  record Break() implements Node {}

  record Continue() implements Node {}

  /** A block rendered as its body (transformers' {@code generation} block). */
  record Transparent(List<Node> body) implements Node {}

  sealed interface Expr permits Literal, Name, ListExpr, DictExpr, Attr, Item, Slice, Call, Filter, Test, Unary,
      Binary, Compare, And, Or, Not, Cond, Spread {}

  record Literal(@Nullable Object value) implements Expr {}

  record Name(String name) implements Expr {}

  record ListExpr(List<Expr> items, boolean tuple) implements Expr {}

  record DictExpr(List<Expr> keys, List<Expr> values) implements Expr {}

  record Attr(Expr target, String name) implements Expr {}

  record Item(Expr target, Expr key) implements Expr {}

  record Slice(Expr target, @Nullable Expr start, @Nullable Expr stop, @Nullable Expr step) implements Expr {}

  record Call(Expr function, List<Expr> args, List<String> kwNames, List<Expr> kwValues) implements Expr {}

  record Filter(Expr target, String name, List<Expr> args, List<String> kwNames, List<Expr> kwValues)
      implements Expr {}

  record Test(Expr target, String name, List<Expr> args, boolean negated) implements Expr {}

  record Unary(String op, Expr operand) implements Expr {}

  record Binary(String op, Expr left, Expr right) implements Expr {}

  record Compare(Expr first, List<String> ops, List<Expr> rest) implements Expr {}

  record And(Expr left, Expr right) implements Expr {}

  record Or(Expr left, Expr right) implements Expr {}

  record Not(Expr operand) implements Expr {}

  record Cond(Expr condition, Expr yes, @Nullable Expr no) implements Expr {}

  /** {@code *values} or {@code **mapping} among a call's arguments. */
  record Spread(Expr value, boolean keywords) implements Expr {}
}
