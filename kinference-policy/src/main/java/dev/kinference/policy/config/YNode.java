package dev.kinference.policy.config;

import java.util.LinkedHashMap;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A parsed YAML (or JSON) value with its position: the input of binding. A tree may share subtrees (YAML aliases)
 * but has no cycles. Immutable once built.
 */
sealed interface YNode permits YNode.YMap, YNode.YList, YNode.YScalar {

  Pos pos();

  /** A 1-based position; line 0 when unknown. */
  record Pos(int line, int column) {
    static final Pos UNKNOWN = new Pos(0, 0);
  }

  /** A mapping with string keys, in document order. */
  record YMap(LinkedHashMap<String, Entry> entries, Pos pos) implements YNode {}

  /** A key (and where it is written) and its value. */
  record Entry(String key, Pos keyPos, YNode value) {}

  record YList(List<YNode> items, Pos pos) implements YNode {}

  /** A scalar; {@code value} is null only for {@link Type#NULL}. */
  record YScalar(@Nullable String value, Type type, Pos pos) implements YNode {}

  /** The resolved type of a scalar (YAML 1.2 core schema). */
  enum Type {
    STRING,
    INT,
    FLOAT,
    BOOL,
    NULL
  }

  /** How a node is described in a type error. */
  static String describe(YNode n) {
    return switch (n) {
      case YMap m -> "a mapping";
      case YList l -> "a list";
      case YScalar s -> switch (s.type()) {
        case STRING -> "string '" + abbreviate(s.value()) + "'";
        case INT -> "integer " + s.value();
        case FLOAT -> "number " + s.value();
        case BOOL -> "boolean " + s.value();
        case NULL -> "null";
      };
    };
  }

  static String abbreviate(@Nullable String s) {
    if (s == null) {
      return "";
    }
    String one = s.replace('\n', ' ');
    return one.length() <= 40 ? one : one.substring(0, 37) + "...";
  }
}
