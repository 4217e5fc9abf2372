package dev.kinference.policy.config;

import java.util.List;
import java.util.stream.Collectors;

/** A configuration has errors; the message lists them, one per line. */
public final class InvalidConfigException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final transient List<Problem> problems;

  public InvalidConfigException(List<Problem> problems) {
    super(problems.size() + " error" + (problems.size() == 1 ? "" : "s") + " in the policy configuration:\n"
        + problems.stream().map(Problem::toString).collect(Collectors.joining("\n")));
    this.problems = List.copyOf(problems);
  }

  public List<Problem> problems() {
    return problems;
  }
}
