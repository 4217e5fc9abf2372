package dev.kinference.plugin;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One parameter a plugin type takes: its name, kind, default and allowed range. A plugin declares its parameters
 * once, and that declaration is the one home of their defaults: a plugin selected by name with no parameters, the
 * default routing profile and a policy file's plugin entry all get these values. Immutable and thread-safe.
 *
 * @param name the key, as written in configuration ({@code knee}, {@code idleExpiry})
 * @param kind what values it takes
 * @param defaultValue the value when none is given: a {@link Double}, {@link Long} or {@link Duration} by kind
 * @param min the lower bound (seconds for a duration)
 * @param minInclusive whether {@code min} itself is allowed
 * @param max the upper bound (seconds for a duration)
 * @param maxInclusive whether {@code max} itself is allowed
 * @param description what it does, in one sentence
 */
public record Parameter(String name, Kind kind, Object defaultValue, double min, boolean minInclusive, double max,
    boolean maxInclusive, String description) {

  /** What values a parameter takes, and the Java type they have in {@link Parameters}. */
  public enum Kind {
    /** A finite number, as a {@link Double}. */
    NUMBER("a number"),
    /** A whole number, as a {@link Long}. */
    INTEGER("an integer"),
    /** A length of time, as a {@link Duration}. */
    DURATION("a duration");

    private final String description;

    Kind(String description) {
      this.description = description;
    }

    /** How the kind reads in a message: "a number". */
    public String description() {
      return description;
    }
  }

  public Parameter {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(defaultValue, "defaultValue");
    Objects.requireNonNull(description, "description");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a parameter needs a name");
    }
    if (Double.isNaN(min) || Double.isNaN(max) || min > max) {
      throw new IllegalArgumentException("parameter " + name + ": invalid range " + min + ".." + max);
    }
    Object normalized = normalize(kind, defaultValue);
    if (normalized == null) {
      throw new IllegalArgumentException("parameter " + name + ": default " + defaultValue + " is not "
          + kind.description());
    }
    defaultValue = normalized;
    String problem = rangeProblem(kind, normalized, min, minInclusive, max, maxInclusive);
    if (problem != null) {
      throw new IllegalArgumentException("parameter " + name + ": the default " + problem);
    }
  }

  /** A number parameter in the range from {@code min} to {@code max}, each bound included or not. */
  public static Parameter number(String name, double defaultValue, double min, boolean minInclusive, double max,
      boolean maxInclusive, String description) {
    return new Parameter(name, Kind.NUMBER, defaultValue, min, minInclusive, max, maxInclusive, description);
  }

  /** A whole-number parameter in {@code [min, max]}. */
  public static Parameter integer(String name, long defaultValue, long min, long max, String description) {
    return new Parameter(name, Kind.INTEGER, defaultValue, min, true, max, true, description);
  }

  /** A positive duration parameter of at most {@code max}. */
  public static Parameter positiveDuration(String name, Duration defaultValue, Duration max, String description) {
    return new Parameter(name, Kind.DURATION, defaultValue, 0, false, seconds(max), true, description);
  }

  /** The allowed values, such as {@code a number in [0, 1)}. */
  public String range() {
    if (kind == Kind.DURATION) {
      return "a duration " + (minInclusive ? "of at least " + format(min) + "s" : "above " + format(min) + "s")
          + " and at most " + format(max) + "s";
    }
    return kind.description() + " in " + (minInclusive ? "[" : "(") + format(min) + ", " + format(max)
        + (maxInclusive ? "]" : ")");
  }

  /**
   * The value as this parameter holds it ({@link Double}, {@link Long} or {@link Duration}), or null when it is of
   * the wrong kind or out of range; {@code problem} then says why. A whole number is accepted for a number.
   */
  @Nullable Object accept(Object value, StringBuilder problem) {
    Object normalized = normalize(kind, value);
    if (normalized == null) {
      problem.append("expected ").append(kind.description()).append(", got ").append(describe(value));
      return null;
    }
    String outOfRange = rangeProblem(kind, normalized, min, minInclusive, max, maxInclusive);
    if (outOfRange != null) {
      problem.append(outOfRange);
      return null;
    }
    return normalized;
  }

  private static @Nullable Object normalize(Kind kind, Object value) {
    return switch (kind) {
      case NUMBER -> value instanceof Double || value instanceof Float || value instanceof Long
          || value instanceof Integer || value instanceof Short || value instanceof Byte
          ? Double.valueOf(((Number) value).doubleValue()) : null;
      case INTEGER -> value instanceof Long || value instanceof Integer || value instanceof Short
          || value instanceof Byte ? Long.valueOf(((Number) value).longValue()) : null;
      case DURATION -> value instanceof Duration ? value : null;
    };
  }

  private static @Nullable String rangeProblem(Kind kind, Object value, double min,
      boolean minInclusive, double max, boolean maxInclusive) {
    double v = switch (kind) {
      case NUMBER -> (Double) value;
      case INTEGER -> ((Long) value).doubleValue();
      case DURATION -> seconds((Duration) value);
    };
    boolean aboveMin = minInclusive ? v >= min : v > min;
    boolean belowMax = maxInclusive ? v <= max : v < max;
    if (Double.isFinite(v) && aboveMin && belowMax) {
      return null;
    }
    String bounds = kind == Kind.DURATION
        ? (minInclusive ? "at least " : "above ") + format(min) + "s and at most " + format(max) + "s"
        : "in " + (minInclusive ? "[" : "(") + format(min) + ", " + format(max) + (maxInclusive ? "]" : ")");
    return "must be " + bounds + ", got " + describe(value);
  }

  private static double seconds(Duration d) {
    return d.getSeconds() + d.getNano() * 1e-9;
  }

  private static String describe(Object value) {
    return switch (value) {
      case Duration d -> d.toString().substring(2).toLowerCase(Locale.ROOT);
      case String s -> "'" + s + "'";
      case Number n -> format(n.doubleValue());
      default -> String.valueOf(value);
    };
  }

  static String format(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }
}
