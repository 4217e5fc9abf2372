package dev.kinference.policy.config;

import dev.kinference.policy.model.Resource;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One document read and checked on its own: the resource (null when it has errors), its source, the problems found
 * in it, and the positions of its fields (kept for the cross-resource checks of {@link PolicyLoader#build}).
 * Immutable and thread-safe.
 */
public final class Parsed {

  private final @Nullable Resource resource;
  private final @Nullable String kind;
  private final @Nullable String name;
  private final String source;
  private final List<Problem> problems;
  final Map<String, YNode.Pos> positions;
  final YNode.Pos start;

  Parsed(@Nullable Resource resource, @Nullable String kind, @Nullable String name, String source,
      List<Problem> problems, Map<String, YNode.Pos> positions, YNode.Pos start) {
    this.resource = resource;
    this.kind = kind;
    this.name = name;
    this.source = source;
    this.problems = List.copyOf(problems);
    this.positions = Map.copyOf(positions);
    this.start = start;
  }

  /** The resource, or null when the document has errors. */
  public @Nullable Resource resource() {
    return resource;
  }

  /** The kind written in the document, even when it has errors; null if none could be read. */
  public @Nullable String kind() {
    return kind;
  }

  /** The name written in the document, even when it has errors; null if none could be read. */
  public @Nullable String name() {
    return name;
  }

  public String source() {
    return source;
  }

  /** The line where the document starts, or 0 when unknown. */
  public int line() {
    return start.line();
  }

  /** The problems of this document alone. */
  public List<Problem> problems() {
    return problems;
  }

  /** Whether the document bound without error. */
  public boolean ok() {
    return resource != null;
  }

  /** The position of a field path, or of its nearest recorded parent, or of the document. */
  YNode.Pos at(String path) {
    String p = path;
    while (true) {
      YNode.Pos pos = positions.get(p);
      if (pos != null) {
        return pos;
      }
      int cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
      if (cut <= 0) {
        return start;
      }
      p = p.substring(0, cut);
    }
  }

  @Override
  public String toString() {
    return "Parsed[" + kind + "/" + name + " " + source + ":" + start.line() + (ok() ? "" : " with errors") + "]";
  }
}
