package dev.kinference.policy.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The one duration grammar of policy files and the command line: a sum of parts {@code 500ms}, {@code 30s},
 * {@code 5m}, {@code 1h}, {@code 2d} (decimals allowed: {@code 1.5s}; {@code 1h30m}), or an ISO-8601 duration
 * ({@code PT30S}). Stateless and thread-safe.
 */
public final class Durations {

  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");

  /** How the grammar is shown in messages. */
  public static final String EXAMPLES = "500ms, 30s, 2m, 1h30m, 7d or PT30S";

  private Durations() {}

  /** The duration {@code text} says, or null when it is not one (or is longer than about 31 years). */
  public static @Nullable Duration parse(String text) {
    String s = text.strip();
    if (s.isEmpty()) {
      return null;
    }
    if (s.startsWith("P") || s.startsWith("p")) {
      try {
        return Duration.parse(s);
      } catch (DateTimeParseException e) {
        return null;
      }
    }
    var m = PART.matcher(s);
    int at = 0;
    double nanos = 0;
    while (at < s.length()) {
      if (!m.find(at) || m.start() != at) {
        return null;
      }
      double v = Double.parseDouble(m.group(1));
      nanos += v * switch (m.group(2)) {
        case "ms" -> 1e6;
        case "s" -> 1e9;
        case "m" -> 60e9;
        case "h" -> 3600e9;
        default -> 86400e9;
      };
      at = m.end();
    }
    if (nanos > 1e18) {
      return null;
    }
    return Duration.ofNanos((long) nanos);
  }
}
