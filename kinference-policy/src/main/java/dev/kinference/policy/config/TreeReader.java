package dev.kinference.policy.config;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Turns a tree of maps, lists and scalars (as JSON or Kubernetes clients produce) into {@link YNode}s. */
final class TreeReader {

  private TreeReader() {}

  static YNode read(@Nullable Object value, Problems problems) {
    int[] budget = {YamlReader.MAX_NODES};
    return read(value, problems, "", 0, budget);
  }

  private static YNode read(@Nullable Object value, Problems problems, String path, int depth, int[] budget) {
    if (--budget[0] < 0) {
      if (budget[0] == -1) {
        problems.error(YNode.Pos.UNKNOWN, path, "document too large: more than " + YamlReader.MAX_NODES + " values");
      }
      return new YNode.YScalar(null, YNode.Type.NULL, YNode.Pos.UNKNOWN);
    }
    if (depth > YamlReader.MAX_DEPTH && (value instanceof Map || value instanceof Collection)) {
      problems.error(YNode.Pos.UNKNOWN, path, "nested more than " + YamlReader.MAX_DEPTH + " levels deep");
      return new YNode.YScalar(null, YNode.Type.NULL, YNode.Pos.UNKNOWN);
    }
    return switch (value) {
      case null -> new YNode.YScalar(null, YNode.Type.NULL, YNode.Pos.UNKNOWN);
      case Map<?, ?> m -> {
        LinkedHashMap<String, YNode.Entry> entries = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
          String key = String.valueOf(e.getKey());
          String child = path.isEmpty() ? key : path + "." + key;
          entries.put(key, new YNode.Entry(key, YNode.Pos.UNKNOWN, read(e.getValue(), problems, child, depth + 1, budget)));
        }
        yield new YNode.YMap(entries, YNode.Pos.UNKNOWN);
      }
      case Collection<?> c -> {
        List<YNode> items = new ArrayList<>(c.size());
        int i = 0;
        for (Object o : c) {
          items.add(read(o, problems, path + "[" + i++ + "]", depth + 1, budget));
        }
        yield new YNode.YList(List.copyOf(items), YNode.Pos.UNKNOWN);
      }
      case Boolean b -> new YNode.YScalar(b.toString(), YNode.Type.BOOL, YNode.Pos.UNKNOWN);
      case Integer n -> new YNode.YScalar(n.toString(), YNode.Type.INT, YNode.Pos.UNKNOWN);
      case Long n -> new YNode.YScalar(n.toString(), YNode.Type.INT, YNode.Pos.UNKNOWN);
      case Short n -> new YNode.YScalar(n.toString(), YNode.Type.INT, YNode.Pos.UNKNOWN);
      case Byte n -> new YNode.YScalar(n.toString(), YNode.Type.INT, YNode.Pos.UNKNOWN);
      case BigInteger n -> new YNode.YScalar(n.toString(), YNode.Type.INT, YNode.Pos.UNKNOWN);
      case BigDecimal n -> new YNode.YScalar(n.toPlainString(), YNode.Type.FLOAT, YNode.Pos.UNKNOWN);
      case Number n -> new YNode.YScalar(n.toString(), YNode.Type.FLOAT, YNode.Pos.UNKNOWN);
      case CharSequence s -> new YNode.YScalar(s.toString(), YNode.Type.STRING, YNode.Pos.UNKNOWN);
      default -> {
        problems.error(YNode.Pos.UNKNOWN, path, "unsupported value of type " + value.getClass().getName());
        yield new YNode.YScalar(null, YNode.Type.NULL, YNode.Pos.UNKNOWN);
      }
    };
  }
}
