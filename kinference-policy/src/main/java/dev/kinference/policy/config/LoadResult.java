package dev.kinference.policy.config;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of loading a configuration: the configuration when there is no error, and every problem found.
 *
 * @param config the configuration, or null when there is at least one error
 * @param problems errors and warnings, ordered by source, line and column
 * @param sources the sources read, in order
 */
public record LoadResult(@Nullable PolicyConfig config, List<Problem> problems, List<String> sources) {

  public LoadResult {
    problems = problems.stream().sorted(Problem.ORDER).toList();
    sources = List.copyOf(sources);
  }

  public boolean hasErrors() {
    return problems.stream().anyMatch(Problem::isError);
  }

  public List<Problem> errors() {
    return problems.stream().filter(Problem::isError).toList();
  }

  public List<Problem> warnings() {
    return problems.stream().filter(p -> !p.isError()).toList();
  }

  /** The configuration. @throws InvalidConfigException listing the errors when there is none */
  public PolicyConfig orThrow() {
    if (config == null) {
      throw new InvalidConfigException(errors());
    }
    return config;
  }

  /** Every problem, one per line, in {@code file:line:column: severity: message} form. */
  public String report() {
    StringBuilder sb = new StringBuilder();
    for (Problem p : problems) {
      sb.append(p).append('\n');
    }
    return sb.toString();
  }
}
