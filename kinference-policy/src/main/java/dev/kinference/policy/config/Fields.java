package dev.kinference.policy.config;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * A mapping being read: every key read or ignored is known; {@link #done} reports the others as unknown fields (with
 * a suggestion). Readers record each value's position and report a wrong type or range with the field's path.
 * Not thread-safe.
 */
final class Fields {
  private final Binding b;
  final YNode.YMap map;
  final String path;
  final YNode.Pos pos;
  final List<String> known = new ArrayList<>();
  final int errorsBefore;

  Fields(Binding b, YNode.YMap map, String path) {
    this.b = b;
    this.map = map;
    this.path = path;
    this.pos = map.pos();
    this.errorsBefore = b.errors;
  }

  String child(String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  boolean has(String key) {
    YNode.Entry e = map.entries().get(key);
    return e != null && !(e.value() instanceof YNode.YScalar s && s.type() == YNode.Type.NULL);
  }

  YNode.Pos pos(String key) {
    YNode.Entry e = map.entries().get(key);
    return e == null ? pos : e.value().pos();
  }

  YNode.Pos keyPos(String key) {
    YNode.Entry e = map.entries().get(key);
    return e == null ? pos : e.keyPos();
  }

  void ignore(String key) {
    known.add(key);
  }

  void ignoreAll() {
    known.addAll(map.entries().keySet());
  }

  /** The value, or null when absent or null; marks the key known and records its position. */
  @Nullable YNode get(String key) {
    known.add(key);
    YNode.Entry e = map.entries().get(key);
    if (e == null) {
      return null;
    }
    b.positions.put(child(key), e.value().pos());
    if (e.value() instanceof YNode.YScalar s && s.type() == YNode.Type.NULL) {
      return null;
    }
    return e.value();
  }

  /** The value without marking the key. */
  @Nullable YNode peek(String key) {
    YNode.Entry e = map.entries().get(key);
    return e == null ? null : e.value();
  }

  void missing(String key, String hint) {
    b.error(pos, child(key), "required field missing" + (hint.isEmpty() ? "" : ": " + hint));
  }

  @Nullable String str(String key) {
    YNode n = get(key);
    return n == null ? null : b.string(n, child(key));
  }

  String requiredStr(String key, String hint) {
    String v = str(key);
    if (v == null) {
      if (!map.entries().containsKey(key) || !has(key)) {
        missing(key, hint);
      }
      return "";
    }
    if (v.isBlank()) {
      b.error(pos(key), child(key), "must not be blank");
    }
    return v;
  }

  @Nullable Fields obj(String key) {
    YNode n = get(key);
    return n == null ? null : b.obj(n, child(key));
  }

  @Nullable Fields requiredObj(String key) {
    YNode n = get(key);
    if (n == null) {
      missing(key, "");
      return null;
    }
    return b.obj(n, child(key));
  }

  @Nullable Long integer(String key, long min, long max) {
    YNode n = get(key);
    if (n == null) {
      return null;
    }
    if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.INT || s.value() == null) {
      b.error(n.pos(), child(key), "expected an integer, got " + YNode.describe(n));
      return null;
    }
    BigInteger v = Scalars.parseInt(s.value());
    if (v == null) {
      b.error(n.pos(), child(key), "expected an integer, got " + YNode.describe(n));
      return null;
    }
    if (v.compareTo(BigInteger.valueOf(max)) > 0) {
      b.error(n.pos(), child(key), "out of range: " + v + " is too large; must be " + Scalars.bounds(min, max));
      return null;
    }
    if (v.compareTo(BigInteger.valueOf(min)) < 0) {
      b.error(n.pos(), child(key), "out of range: " + v + " is too small; must be " + Scalars.bounds(min, max));
      return null;
    }
    return v.longValue();
  }

  @Nullable Double number(String key, double min, double max) {
    YNode n = get(key);
    if (n == null) {
      return null;
    }
    if (!(n instanceof YNode.YScalar s) || (s.type() != YNode.Type.INT && s.type() != YNode.Type.FLOAT)
        || s.value() == null) {
      b.error(n.pos(), child(key), "expected a number, got " + YNode.describe(n));
      return null;
    }
    double v = s.type() == YNode.Type.INT ? Scalars.toDouble(Scalars.parseInt(s.value()))
        : Scalars.parseFloat(s.value());
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      b.error(n.pos(), child(key), "expected a finite number, got " + s.value());
      return null;
    }
    if (v < min || v > max) {
      b.error(n.pos(), child(key), "must be between " + Scalars.fmt(min) + " and " + Scalars.fmt(max) + ", got "
          + s.value());
      return null;
    }
    return v;
  }

  @Nullable Boolean bool(String key) {
    YNode n = get(key);
    if (n == null) {
      return null;
    }
    if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.BOOL || s.value() == null) {
      b.error(n.pos(), child(key), "expected true or false, got " + YNode.describe(n));
      return null;
    }
    return s.value().equalsIgnoreCase("true");
  }

  @Nullable Duration duration(String key) {
    YNode n = get(key);
    if (n == null) {
      return null;
    }
    if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.STRING || s.value() == null) {
      b.error(n.pos(), child(key), "expected a duration such as 500ms, 30s, 5m or 1h, got " + YNode.describe(n));
      return null;
    }
    Duration d = Durations.parse(s.value());
    if (d == null || d.isNegative()) {
      b.error(n.pos(), child(key), "invalid duration '" + YNode.abbreviate(s.value())
          + "': write it like 500ms, 30s, 5m, 1h or PT30S");
      return null;
    }
    return d;
  }

  <E extends Enum<E>> @Nullable E enumValue(String key, Class<E> type,
      java.util.function.Function<E, String> yamlName) {
    YNode n = get(key);
    return n == null ? null : b.enumValue(n, child(key), type, yamlName);
  }

  <E extends Enum<E>> List<E> enumList(String key, Class<E> type, java.util.function.Function<E, String> yamlName) {
    return list(key, (n, p) -> b.enumValue(n, p, type, yamlName));
  }

  List<String> strList(String key) {
    return list(key, (n, p) -> {
      String s = b.string(n, p);
      if (s != null && s.isBlank()) {
        b.error(n.pos(), p, "must not be blank");
        return null;
      }
      return s;
    });
  }

  Map<String, String> strMap(String key) {
    Map<String, String> m = map(key, b::string);
    return m;
  }

  <T> List<T> list(String key, BiFunction<YNode, String, @Nullable T> item) {
    YNode n = get(key);
    if (n == null) {
      return List.of();
    }
    if (!(n instanceof YNode.YList l)) {
      b.error(n.pos(), child(key), "expected a list, got " + YNode.describe(n));
      return List.of();
    }
    List<T> out = new ArrayList<>(l.items().size());
    for (int i = 0; i < l.items().size(); i++) {
      YNode c = l.items().get(i);
      String p = child(key) + "[" + i + "]";
      b.positions.put(p, c.pos());
      if (c instanceof YNode.YScalar s && s.type() == YNode.Type.NULL) {
        b.error(c.pos(), p, "empty list entry");
        continue;
      }
      T v = item.apply(c, p);
      if (v != null) {
        out.add(v);
      }
    }
    return out;
  }

  <T> Map<String, T> map(String key, BiFunction<YNode, String, @Nullable T> value) {
    YNode n = get(key);
    if (n == null) {
      return Map.of();
    }
    if (!(n instanceof YNode.YMap m)) {
      b.error(n.pos(), child(key), "expected a mapping, got " + YNode.describe(n));
      return Map.of();
    }
    Map<String, T> out = new LinkedHashMap<>();
    for (YNode.Entry e : m.entries().values()) {
      String p = child(key) + "." + e.key();
      b.positions.put(p, e.value().pos());
      T v = value.apply(e.value(), p);
      if (v != null) {
        out.put(e.key(), v);
      }
    }
    return out;
  }

  void done() {
    for (YNode.Entry e : map.entries().values()) {
      if (!known.contains(e.key())) {
        b.error(e.keyPos(), child(e.key()), "unknown field" + Suggestions.suggest(e.key(), known));
      }
    }
  }
}
