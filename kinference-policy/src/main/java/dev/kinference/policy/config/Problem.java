package dev.kinference.policy.config;

import java.util.Comparator;
import java.util.Objects;

/**
 * One thing wrong (or suspicious) in a configuration, with where it is.
 *
 * @param severity errors make a configuration unusable; warnings do not
 * @param source the file name (or another source name given by the caller)
 * @param line 1-based line, or 0 when unknown (trees that did not come from YAML text)
 * @param column 1-based column, or 0 when unknown
 * @param path the field, such as {@code spec.rules[2].match.models}; empty for the whole document
 * @param message what is wrong, and where possible how to fix it
 */
public record Problem(Severity severity, String source, int line, int column, String path, String message) {

  /** Orders problems by source, line, column, then message. */
  public static final Comparator<Problem> ORDER = Comparator.comparing(Problem::source)
      .thenComparingInt(Problem::line).thenComparingInt(Problem::column).thenComparing(Problem::path)
      .thenComparing(Problem::message);

  public Problem {
    Objects.requireNonNull(severity, "severity");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(message, "message");
  }

  public boolean isError() {
    return severity == Severity.ERROR;
  }

  /**
   * {@code file:line:column: severity: path: message}, or {@code file: severity: path: message} when the position
   * is unknown.
   */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(source);
    if (line > 0) {
      sb.append(':').append(line).append(':').append(Math.max(1, column));
    }
    sb.append(": ").append(severity.label()).append(": ");
    if (!path.isEmpty()) {
      sb.append(path).append(": ");
    }
    return sb.append(message).toString();
  }

  /** How bad a problem is. */
  public enum Severity {
    ERROR("error"),
    WARNING("warning");

    private final String label;

    Severity(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }
}
