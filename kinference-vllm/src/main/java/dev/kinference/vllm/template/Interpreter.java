package dev.kinference.vllm.template;

import dev.kinference.vllm.template.Ast.Expr;
import dev.kinference.vllm.template.Ast.Node;
import dev.kinference.vllm.template.Py.Undefined;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Renders parsed templates with Jinja2's semantics. One instance per render; not thread-safe. */
final class Interpreter {

  private static final int MAX_OUTPUT = 64 << 20;
  private static final int MAX_DEPTH = 200;

  private enum Flow {
    NORMAL, BREAK, CONTINUE
  }

  /** Variables of one scope; lookups fall back to the parent. */
  private static final class Scope {
    final @Nullable Scope parent;
    final Map<String, @Nullable Object> vars = new HashMap<>();

    Scope(@Nullable Scope parent) {
      this.parent = parent;
    }

    @Nullable Object get(String name) {
      for (Scope s = this; s != null; s = s.parent) {
        if (s.vars.containsKey(name)) {
          return s.vars.get(name);
        }
      }
      return new Undefined("'" + name + "' is undefined");
    }
  }

  /** The {@code loop} variable of a for loop. */
  private static final class Loop {
    private static final Object NOTHING_YET = new Object();
    final List<@Nullable Object> items;
    int index0;
    @Nullable Object lastChanged = NOTHING_YET;

    Loop(List<@Nullable Object> items) {
      this.items = items;
    }

    @Nullable Object attr(String name) {
      int n = items.size();
      return switch (name) {
        case "index" -> (long) index0 + 1;
        case "index0" -> (long) index0;
        case "revindex" -> (long) (n - index0);
        case "revindex0" -> (long) (n - index0 - 1);
        case "first" -> index0 == 0;
        case "last" -> index0 == n - 1;
        case "length" -> (long) n;
        case "depth" -> 1L;
        case "depth0" -> 0L;
        case "previtem" -> index0 > 0 ? items.get(index0 - 1) : new Undefined("no previous item");
        case "nextitem" -> index0 < n - 1 ? items.get(index0 + 1) : new Undefined("no next item");
        case "changed" -> (Py.Callable) (args, kw) -> {
          Object value = new Py.Tuple(args);
          if (lastChanged != NOTHING_YET && Py.equal(lastChanged, value)) {
            return false;
          }
          lastChanged = value;
          return true;
        };
        case "cycle" -> (Py.Callable) (args, kw) -> {
          if (args.isEmpty()) {
            throw TemplateException.fail("loop.cycle needs arguments");
          }
          return args.get(index0 % args.size());
        };
        default -> new Undefined("loop has no attribute '" + name + "'");
      };
    }
  }

  private final StringBuilder out = new StringBuilder();
  private int depth;

  static String render(List<Node> template, Map<String, @Nullable Object> globals,
      Map<String, @Nullable Object> context) {
    Interpreter in = new Interpreter();
    Scope root = new Scope(null);
    root.vars.putAll(globals);
    Scope top = new Scope(root);
    top.vars.putAll(context);
    Flow f = in.execute(template, top);
    if (f != Flow.NORMAL) {
      throw TemplateException.fail("break or continue outside a loop");
    }
    return in.out.toString();
  }

  private Flow execute(List<Node> nodes, Scope scope) {
    for (Node node : nodes) {
      Flow f = execute(node, scope);
      if (f != Flow.NORMAL) {
        return f;
      }
    }
    return Flow.NORMAL;
  }

  private Flow execute(Node node, Scope scope) {
    switch (node) {
      case Ast.Text t -> append(t.text());
      case Ast.Output o -> append(Py.str(eval(o.expr(), scope)));
      case Ast.If i -> {
        for (Ast.Branch b : i.branches()) {
          if (Py.truthy(eval(b.condition(), scope))) {
            return execute(b.body(), scope);
          }
        }
        return execute(i.otherwise(), scope);
      }
      case Ast.For f -> {
        return executeFor(f, scope);
      }
      case Ast.Set s -> executeSet(s, scope);
      case Ast.SetBlock s -> {
        Interpreter inner = new Interpreter();
        inner.depth = depth;
        inner.execute(s.body(), scope);
        Object value = inner.out.toString();
        Ast.Expr filters = s.filters();
        if (filters != null) {
          Scope withBody = new Scope(scope);
          withBody.vars.put(Ast.FilterBlock.BODY, value);
          value = eval(filters, withBody);
        }
        scope.vars.put(s.target(), value);
      }
      case Ast.Macro m -> scope.vars.put(m.name(), macro(m, scope));
      case Ast.CallBlock c -> {
        Object fn = eval(c.call().function(), scope);
        if (!(fn instanceof Py.Callable callable)) {
          throw TemplateException.fail(describe(c.call().function()) + " is not callable (" + Py.typeName(fn) + ")");
        }
        List<@Nullable Object> args = new ArrayList<>();
        Map<String, @Nullable Object> kw = new LinkedHashMap<>();
        collectArguments(c.call().args(), c.call().kwNames(), c.call().kwValues(), scope, args, kw);
        kw.put("caller", macro(c.caller(), scope));
        append(Py.str(callable.call(args, kw)));
      }
      case Ast.FilterBlock f -> {
        Interpreter inner = new Interpreter();
        inner.depth = depth;
        inner.execute(f.body(), scope);
        Scope withBody = new Scope(scope);
        withBody.vars.put(Ast.FilterBlock.BODY, inner.out.toString());
        append(Py.str(eval(f.filters(), withBody)));
      }
      case Ast.With w -> {
        Scope inner = new Scope(scope);
        for (int i = 0; i < w.names().size(); i++) {
          inner.vars.put(w.names().get(i), eval(w.values().get(i), scope));
        }
        return execute(w.body(), inner);
      }
      case Ast.Break b -> {
        return Flow.BREAK;
      }
      case Ast.Continue c -> {
        return Flow.CONTINUE;
      }
      case Ast.Transparent t -> {
        return execute(t.body(), scope);
      }
    }
    return Flow.NORMAL;
  }

  private void append(String s) {
    out.append(s);
    if (out.length() > MAX_OUTPUT) {
      throw TemplateException.fail("template output exceeds " + MAX_OUTPUT + " characters");
    }
  }

  private Flow executeFor(Ast.For f, Scope scope) {
    List<@Nullable Object> all = Py.iterate(eval(f.iterable(), scope));
    List<@Nullable Object> items;
    if (f.filter() == null) {
      items = all;
    } else {
      items = new ArrayList<>();
      for (Object item : all) {
        Scope probe = new Scope(scope);
        bindTargets(f.targets(), item, probe, f.line());
        if (Py.truthy(eval(f.filter(), probe))) {
          items.add(item);
        }
      }
    }
    if (items.isEmpty()) {
      return execute(f.otherwise(), scope);
    }
    Loop loop = new Loop(items);
    for (int i = 0; i < items.size(); i++) {
      loop.index0 = i;
      Scope body = new Scope(scope);
      body.vars.put("loop", loop);
      bindTargets(f.targets(), items.get(i), body, f.line());
      Flow flow = execute(f.body(), body);
      if (flow == Flow.BREAK) {
        break;
      }
    }
    return Flow.NORMAL;
  }

  private static void bindTargets(List<String> targets, @Nullable Object item, Scope scope, int line) {
    if (targets.size() == 1) {
      scope.vars.put(targets.get(0), item);
      return;
    }
    List<@Nullable Object> parts = Py.iterate(item);
    if (parts.size() != targets.size()) {
      throw TemplateException.fail("line " + line + ": cannot unpack " + parts.size() + " values into "
          + targets.size() + " names");
    }
    for (int i = 0; i < targets.size(); i++) {
      scope.vars.put(targets.get(i), parts.get(i));
    }
  }

  private void executeSet(Ast.Set s, Scope scope) {
    Object value = eval(s.value(), scope);
    if (s.attribute() != null) {
      Object target = scope.get(s.targets().get(0));
      if (!(target instanceof Py.Namespace ns)) {
        throw TemplateException.fail("line " + s.line() + ": cannot assign attribute on non-namespace object "
            + s.targets().get(0));
      }
      ns.attributes.put(s.attribute(), value);
      return;
    }
    bindTargets(s.targets(), value, scope, s.line());
  }

  private Py.Callable macro(Ast.Macro m, Scope definedIn) {
    return (args, kw) -> {
      if (args.size() > m.params().size() && !m.varargs()) {
        throw TemplateException.fail("macro '" + m.name() + "' takes not more than " + m.params().size()
            + " argument(s)");
      }
      Scope call = new Scope(definedIn);
      Map<String, @Nullable Object> rest = new LinkedHashMap<>(kw);
      if (rest.containsKey("caller")) {
        call.vars.put("caller", rest.remove("caller"));
      }
      for (int i = 0; i < m.params().size(); i++) {
        String p = m.params().get(i);
        Object v;
        if (i < args.size()) {
          v = args.get(i);
        } else if (rest.containsKey(p)) {
          v = rest.remove(p);
        } else {
          Expr d = m.defaults().get(i);
          v = d == null ? new Undefined("missing argument '" + p + "'") : eval(d, call);
        }
        call.vars.put(p, v);
      }
      if (!rest.isEmpty() && !m.kwargs()) {
        throw TemplateException.fail("macro '" + m.name() + "' takes no keyword argument '"
            + rest.keySet().iterator().next() + "'");
      }
      call.vars.put("varargs", new Py.Tuple(args.subList(Math.min(args.size(), m.params().size()), args.size())));
      call.vars.put("kwargs", new LinkedHashMap<@Nullable Object, @Nullable Object>(rest));
      Interpreter inner = new Interpreter();
      inner.depth = depth + 1;
      if (inner.depth > MAX_DEPTH) {
        throw TemplateException.fail("macro recursion too deep");
      }
      inner.execute(m.body(), call);
      return inner.out.toString();
    };
  }

  // ---- expressions ----

  private @Nullable Object eval(Expr e, Scope scope) {
    return switch (e) {
      case Ast.Literal l -> l.value();
      case Ast.Name n -> scope.get(n.name());
      case Ast.ListExpr l -> {
        List<@Nullable Object> items = new ArrayList<>(l.items().size());
        for (Expr x : l.items()) {
          items.add(eval(x, scope));
        }
        yield l.tuple() ? new Py.Tuple(items) : items;
      }
      case Ast.DictExpr d -> {
        Map<@Nullable Object, @Nullable Object> m = new LinkedHashMap<>();
        for (int i = 0; i < d.keys().size(); i++) {
          m.put(eval(d.keys().get(i), scope), eval(d.values().get(i), scope));
        }
        yield m;
      }
      case Ast.Attr a -> getAttr(eval(a.target(), scope), a.name());
      case Ast.Item i -> getItem(eval(i.target(), scope), eval(i.key(), scope));
      case Ast.Slice s -> slice(eval(s.target(), scope), opt(s.start(), scope), opt(s.stop(), scope), opt(s.step(), scope));
      case Ast.Call c -> {
        Object fn = eval(c.function(), scope);
        if (!(fn instanceof Py.Callable callable)) {
          throw TemplateException.fail(describe(c.function()) + " is not callable (" + Py.typeName(fn) + ")");
        }
        List<@Nullable Object> args = new ArrayList<>();
        Map<String, @Nullable Object> kw = new LinkedHashMap<>();
        collectArguments(c.args(), c.kwNames(), c.kwValues(), scope, args, kw);
        yield callable.call(args, kw);
      }
      case Ast.Filter f -> {
        Object target = eval(f.target(), scope);
        List<@Nullable Object> args = new ArrayList<>();
        Map<String, @Nullable Object> kw = new LinkedHashMap<>();
        collectArguments(f.args(), f.kwNames(), f.kwValues(), scope, args, kw);
        yield Filters.filter(this, f.name(), target, args, kw);
      }
      case Ast.Spread s -> throw TemplateException.fail("*" + (s.keywords() ? "*" : "") + " is allowed in calls only");
      case Ast.Test t -> {
        Object target = eval(t.target(), scope); // x.a is defined reads x strictly, as Jinja2
        List<@Nullable Object> args = new ArrayList<>();
        for (Expr a : t.args()) {
          args.add(eval(a, scope));
        }
        yield Builtins.test(t.name(), target, args) != t.negated();
      }
      case Ast.Unary u -> {
        Object v = eval(u.operand(), scope);
        if (!Py.isNumber(v)) {
          throw TemplateException.fail("bad operand type for unary " + u.op() + ": " + Py.typeName(v));
        }
        if (u.op().equals("+")) {
          yield v instanceof Boolean ? (Object) Py.toLong(v) : v;
        }
        if (v instanceof Double d) {
          yield -d;
        }
        yield Py.normalize(Py.toBig(v).negate());
      }
      case Ast.Binary b -> {
        Object l = eval(b.left(), scope);
        Object r = eval(b.right(), scope);
        if (b.op().equals("~")) {
          yield Py.str(l) + Py.str(r);
        }
        yield Operators.arithmetic(b.op(), l, r);
      }
      case Ast.Compare c -> compareChain(c, scope);
      case Ast.And a -> {
        Object l = eval(a.left(), scope);
        yield Py.truthy(l) ? eval(a.right(), scope) : l;
      }
      case Ast.Or o -> {
        Object l = eval(o.left(), scope);
        yield Py.truthy(l) ? l : eval(o.right(), scope);
      }
      case Ast.Not n -> !Py.truthy(eval(n.operand(), scope));
      case Ast.Cond c -> {
        if (Py.truthy(eval(c.condition(), scope))) {
          yield eval(c.yes(), scope);
        }
        yield c.no() == null ? new Undefined("conditional without else") : eval(c.no(), scope);
      }
    };
  }

  /** Evaluates a call's arguments, expanding {@code *values} into positional and {@code **mapping} into keywords. */
  private void collectArguments(List<Expr> positional, List<String> kwNames, List<Expr> kwValues, Scope scope,
      List<@Nullable Object> args, Map<String, @Nullable Object> kw) {
    List<Ast.Spread> keywordSpreads = new ArrayList<>();
    for (Expr a : positional) {
      if (a instanceof Ast.Spread s && s.keywords()) {
        keywordSpreads.add(s);
      } else if (a instanceof Ast.Spread s) {
        args.addAll(Py.iterate(eval(s.value(), scope)));
      } else {
        args.add(eval(a, scope));
      }
    }
    for (int i = 0; i < kwNames.size(); i++) {
      kw.put(kwNames.get(i), eval(kwValues.get(i), scope));
    }
    // Jinja2 passes the named keywords first and **mapping after them, whatever order the call writes
    for (Ast.Spread s : keywordSpreads) {
      Object m = eval(s.value(), scope);
      if (!(m instanceof Map<?, ?> map)) {
        throw TemplateException.fail("argument after ** must be a mapping, not " + Py.typeName(m));
      }
      map.forEach((k, v) -> kw.put(Py.str(k), v));
    }
  }

  private boolean compareChain(Ast.Compare c, Scope scope) {
    Object left = eval(c.first(), scope);
    for (int i = 0; i < c.ops().size(); i++) {
      Object right = eval(c.rest().get(i), scope);
      if (!Operators.compare(c.ops().get(i), left, right)) {
        return false;
      }
      left = right;
    }
    return true;
  }

  private @Nullable Object opt(@Nullable Expr e, Scope scope) {
    return e == null ? null : eval(e, scope);
  }

  private static String describe(Expr e) {
    return switch (e) {
      case Ast.Name n -> "'" + n.name() + "'";
      case Ast.Attr a -> "'" + a.name() + "'";
      default -> "the expression";
    };
  }

  /** {@code obj.name}: an attribute or method first, then an item, as Jinja2's {@code getattr}. */
  @Nullable Object getAttr(@Nullable Object obj, String name) {
    if (obj instanceof Undefined u) {
      throw TemplateException.fail("cannot read attribute '" + name + "' of an undefined value (" + u.hint + ")");
    }
    if (obj instanceof Loop loop) {
      return loop.attr(name);
    }
    if (obj instanceof Py.Namespace ns) {
      return ns.attributes.containsKey(name) ? ns.attributes.get(name)
          : new Undefined("namespace has no attribute '" + name + "'");
    }
    if (obj instanceof Py.Tuple t && t.hasField(name)) {
      return t.field(name);
    }
    Py.Callable method = Builtins.method(obj, name);
    if (method != null) {
      return method;
    }
    if (obj instanceof Map<?, ?> m) {
      return m.containsKey(name) ? m.get(name) : new Undefined("no key '" + name + "'");
    }
    if (obj instanceof String || obj instanceof List || obj == null || Py.isNumber(obj)) {
      if (isMutatingMethod(name)) {
        throw TemplateException.fail("access to '" + name + "' is unsafe in the sandbox");
      }
      return new Undefined(Py.typeName(obj) + " has no attribute '" + name + "'");
    }
    return new Undefined(Py.typeName(obj) + " has no attribute '" + name + "'");
  }

  private static boolean isMutatingMethod(String name) {
    return switch (name) {
      case "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort",
          "reverse" -> true;
      default -> false;
    };
  }

  /** {@code obj[key]}: an item first, then an attribute. */
  @Nullable Object getItem(@Nullable Object obj, @Nullable Object key) {
    if (obj instanceof Undefined u) {
      throw TemplateException.fail("cannot index an undefined value (" + u.hint + ")");
    }
    if (obj instanceof List<?> list && (key instanceof Long || key instanceof Boolean)) {
      long i = Py.toLong(key);
      if (i < 0) {
        i += list.size();
      }
      return i >= 0 && i < list.size() ? list.get((int) i) : new Undefined("index " + key + " out of range");
    }
    if (obj instanceof String s && (key instanceof Long || key instanceof Boolean)) {
      int[] cps = s.codePoints().toArray();
      long i = Py.toLong(key);
      if (i < 0) {
        i += cps.length;
      }
      return i >= 0 && i < cps.length ? new String(cps, (int) i, 1) : new Undefined("index out of range");
    }
    if (obj instanceof Map<?, ?> m) {
      if (m.containsKey(key)) {
        return m.get(key);
      }
      for (Map.Entry<?, ?> entry : m.entrySet()) {
        if (Py.equal(entry.getKey(), key)) {
          return entry.getValue();
        }
      }
    }
    if (key instanceof String name) {
      return getAttr(obj, name);
    }
    return new Undefined(Py.typeName(obj) + " has no item " + Py.repr(key));
  }

  /** An item by key or, for a string key, an attribute (filters' {@code attribute=} arguments). */
  @Nullable Object getItemOrAttr(@Nullable Object obj, @Nullable Object key) {
    if (key instanceof String s) {
      // Jinja2's attribute paths: 'a.b' is two look-ups, and a part of digits is an index ('1' is item 1 of a pair)
      Object v = obj;
      for (String part : s.split("\\.", -1)) {
        v = getItem(v, part.matches("\\d+") ? Py.normalize(new java.math.BigInteger(part)) : part);
      }
      return v;
    }
    return getItem(obj, key);
  }

  static @Nullable Object slice(@Nullable Object obj, @Nullable Object startV, @Nullable Object stopV,
      @Nullable Object stepV) {
    long step = stepV == null ? 1 : Py.toLong(stepV);
    if (step == 0) {
      throw TemplateException.fail("slice step cannot be zero");
    }
    List<@Nullable Object> items;
    boolean string = obj instanceof String;
    if (obj instanceof List<?> l) {
      items = new ArrayList<>(l);
    } else if (string) {
      items = Py.iterate(obj);
    } else {
      throw TemplateException.fail("cannot slice a " + Py.typeName(obj));
    }
    int n = items.size();
    long start;
    long stop;
    if (step > 0) {
      start = startV == null ? 0 : clamp(Py.toLong(startV), n, 0, n);
      stop = stopV == null ? n : clamp(Py.toLong(stopV), n, 0, n);
    } else {
      start = startV == null ? n - 1 : clamp(Py.toLong(startV), n, -1, n - 1);
      stop = stopV == null ? -1 : clamp(Py.toLong(stopV), n, -1, n - 1);
    }
    List<@Nullable Object> out = new ArrayList<>();
    for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
      out.add(items.get((int) i));
    }
    if (string) {
      StringBuilder sb = new StringBuilder();
      out.forEach(x -> sb.append((String) x));
      return sb.toString();
    }
    return obj instanceof Py.Tuple ? new Py.Tuple(out) : out;
  }

  private static long clamp(long index, int n, long low, long high) {
    long i = index < 0 ? index + n : index;
    return Math.max(low, Math.min(high, i));
  }
}
