package dev.kinference.policy.config;

import java.math.BigInteger;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** A YAML scalar's text as a number (integers may have {@code _}, {@code 0x}, {@code 0o}), and numbers for messages. */
final class Scalars {

  private Scalars() {}

  static @Nullable Integer toInt(@Nullable Long v) {
    return v == null ? null : (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
  }

  static double parseDouble(@Nullable String v) {
    if (v == null) {
      return Double.NaN;
    }
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  static @Nullable BigInteger parseInt(String v) {
    try {
      String s = v.replace("_", "");
      boolean neg = s.startsWith("-");
      if (s.startsWith("-") || s.startsWith("+")) {
        s = s.substring(1);
      }
      BigInteger r;
      if (s.startsWith("0x")) {
        r = new BigInteger(s.substring(2), 16);
      } else if (s.startsWith("0o")) {
        r = new BigInteger(s.substring(2), 8);
      } else {
        r = new BigInteger(s);
      }
      return neg ? r.negate() : r;
    } catch (NumberFormatException | ArithmeticException e) {
      return null;
    }
  }

  static double toDouble(@Nullable BigInteger v) {
    return v == null ? Double.NaN : v.doubleValue();
  }

  static double parseFloat(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    if (s.endsWith(".inf") || s.endsWith(".nan")) {
      return Double.NaN;
    }
    return parseDouble(s);
  }

  static String bounds(long min, long max) {
    if (max >= Long.MAX_VALUE / 4) {
      return "at least " + min;
    }
    return "between " + min + " and " + max;
  }

  static String fmt(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }
}
