package dev.kinference.policy.config;

import java.util.ArrayList;
import java.util.List;

/** Collects the problems of one source. Not thread-safe. */
final class Problems {

  /** The most problems kept per source; a file that produces more is hopeless and the rest say nothing new. */
  static final int MAX = 500;

  private final String source;
  private final List<Problem> list;
  private boolean truncated;

  Problems(String source) {
    this(source, new ArrayList<>());
  }

  Problems(String source, List<Problem> sink) {
    this.source = source;
    this.list = sink;
  }

  String source() {
    return source;
  }

  void error(YNode.Pos pos, String path, String message) {
    add(Problem.Severity.ERROR, pos, path, message);
  }

  void warn(YNode.Pos pos, String path, String message) {
    add(Problem.Severity.WARNING, pos, path, message);
  }

  void add(Problem.Severity severity, YNode.Pos pos, String path, String message) {
    if (list.size() >= MAX) {
      if (!truncated) {
        truncated = true;
        list.add(new Problem(Problem.Severity.ERROR, source, pos.line(), pos.column(), "",
            "more than " + MAX + " problems; the rest are not shown"));
      }
      return;
    }
    list.add(new Problem(severity, source, pos.line(), pos.column(), path, message));
  }

  List<Problem> list() {
    return list;
  }

  boolean hasErrors() {
    return list.stream().anyMatch(Problem::isError);
  }
}
