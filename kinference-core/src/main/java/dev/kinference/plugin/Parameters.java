package dev.kinference.plugin;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Validated values for a plugin's declared {@link Parameter}s: every declared parameter has a value, given or its
 * default, and nothing undeclared is present. This is the parameter channel of plugins, as llm-d gives each plugin
 * instance its own {@code parameters}. Immutable and thread-safe; equal when the values are.
 */
public final class Parameters {

  private final Map<String, Object> values;

  private Parameters(Map<String, Object> values) {
    this.values = Collections.unmodifiableMap(values);
  }

  /**
   * One thing wrong with given parameters.
   *
   * @param key the parameter written, as given
   * @param message what is wrong, naming the allowed keys or range
   */
  public record Problem(String key, String message) {
    public Problem {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(message, "message");
    }
  }

  /** Every declared parameter at its default. */
  public static Parameters defaults(List<Parameter> declared) {
    return of(declared, Map.of());
  }

  /**
   * The declared parameters with the given values over their defaults.
   *
   * @throws IllegalArgumentException listing every {@link #problems problem}
   */
  public static Parameters of(List<Parameter> declared, Map<String, ?> given) {
    List<Problem> problems = problems(declared, given);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(problems.stream().map(p -> p.key() + ": " + p.message())
          .collect(Collectors.joining("; ")));
    }
    Map<String, Object> values = new LinkedHashMap<>();
    for (Parameter p : declared) {
      Object v = given.get(p.name());
      values.put(p.name(), v == null ? p.defaultValue() : Objects.requireNonNull(p.accept(v, new StringBuilder())));
    }
    return new Parameters(values);
  }

  /**
   * What is wrong with {@code given} against {@code declared}, in the order given: keys not declared (naming the
   * ones that are), values of the wrong kind or out of range (naming the range). Empty when it is valid.
   */
  public static List<Problem> problems(List<Parameter> declared, Map<String, ?> given) {
    Map<String, Parameter> byName = new LinkedHashMap<>();
    declared.forEach(p -> byName.put(p.name(), p));
    List<Problem> out = new ArrayList<>();
    for (Map.Entry<String, ?> e : given.entrySet()) {
      Parameter p = byName.get(e.getKey());
      if (p == null) {
        out.add(new Problem(e.getKey(), "unknown parameter '" + e.getKey() + "'; "
            + (byName.isEmpty() ? "this plugin takes no parameters" : "allowed: " + String.join(", ", byName.keySet()))));
        continue;
      }
      if (e.getValue() == null) {
        out.add(new Problem(e.getKey(), "expected " + p.range() + ", got null"));
        continue;
      }
      StringBuilder problem = new StringBuilder();
      if (p.accept(e.getValue(), problem) == null) {
        out.add(new Problem(e.getKey(), problem.toString()));
      }
    }
    return out;
  }

  /** The value of a {@link Parameter.Kind#NUMBER} parameter. */
  public double number(String name) {
    return (Double) require(name, Double.class);
  }

  /** The value of an {@link Parameter.Kind#INTEGER} parameter. */
  public long integer(String name) {
    return (Long) require(name, Long.class);
  }

  /** The value of a {@link Parameter.Kind#DURATION} parameter. */
  public Duration duration(String name) {
    return (Duration) require(name, Duration.class);
  }

  /** Every value by name, in declaration order. */
  public Map<String, Object> asMap() {
    return values;
  }

  private Object require(String name, Class<?> type) {
    Object v = values.get(name);
    if (!type.isInstance(v)) {
      throw new IllegalArgumentException("no " + type.getSimpleName() + " parameter '" + name + "'; declared: "
          + values.keySet());
    }
    return v;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Parameters p && p.values.equals(values);
  }

  @Override
  public int hashCode() {
    return values.hashCode();
  }

  /** {@code knee=0.5, ...}; durations as ISO-8601. */
  @Override
  public String toString() {
    return values.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "));
  }
}
