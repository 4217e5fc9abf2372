package dev.kinference.sim.server;

import java.math.BigDecimal;
import java.util.Map;

/**
 * The Prometheus text exposition format (0.0.4) exactly as Python's {@code prometheus_client.generate_latest}
 * writes it, which is what vLLM serves: labels sorted by name, values formatted by {@code floatToGoString}
 * (Python's float {@code repr}, switching to an exponent sooner as Go does), counters named with {@code _total},
 * and each counter's or histogram's {@code _created} samples moved into a gauge family of their own after it.
 *
 * <p>Stateless and thread-safe.
 */
final class PrometheusTextWriter {

  private PrometheusTextWriter() {}

  static void help(StringBuilder out, String name, String type, String help) {
    out.append("# HELP ").append(name).append(' ')
        .append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
    out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  /** One sample line; {@code labels} must be sorted by name (a {@link java.util.TreeMap}). */
  static void sample(StringBuilder out, String name, Map<String, String> labels, double value) {
    out.append(name);
    if (!labels.isEmpty()) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, String> e : labels.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        out.append(e.getKey()).append("=\"").append(escapeLabel(e.getValue())).append('"');
      }
      out.append('}');
    }
    out.append(' ').append(goFloat(value)).append('\n');
  }

  static String escapeLabel(String v) {
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace("\"", "\\\"");
  }

  /** {@code prometheus_client.utils.floatToGoString}. */
  static String goFloat(double d) {
    if (d == Double.POSITIVE_INFINITY) {
      return "+Inf";
    }
    if (d == Double.NEGATIVE_INFINITY) {
      return "-Inf";
    }
    if (Double.isNaN(d)) {
      return "NaN";
    }
    String s = pythonRepr(d);
    int dot = s.indexOf('.');
    if (d > 0 && dot > 6) {
      String mantissa = s.charAt(0) + "." + s.substring(1, dot) + s.substring(dot + 1);
      int end = mantissa.length();
      while (end > 0 && (mantissa.charAt(end - 1) == '0' || mantissa.charAt(end - 1) == '.')) {
        end--;
      }
      return mantissa.substring(0, end) + "e+0" + (dot - 1);
    }
    return s;
  }

  /** Python's {@code repr(float)}: the shortest round-tripping digits, exponent form below 1e-4 or from 1e16. */
  static String pythonRepr(double d) {
    if (d == 0) {
      return (1 / d) < 0 ? "-0.0" : "0.0";
    }
    // Double.toString gives the shortest round-tripping digits (JDK 19+).
    BigDecimal bd = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
    String digits = bd.unscaledValue().toString();
    int decExp = digits.length() - bd.scale(); // value = 0.digits x 10^decExp
    StringBuilder sb = new StringBuilder();
    if (d < 0) {
      sb.append('-');
    }
    int exp10 = decExp - 1;
    if (exp10 < -4 || exp10 >= 16) {
      sb.append(digits.charAt(0));
      if (digits.length() > 1) {
        sb.append('.').append(digits, 1, digits.length());
      }
      sb.append('e').append(exp10 < 0 ? '-' : '+');
      int abs = Math.abs(exp10);
      if (abs < 10) {
        sb.append('0');
      }
      sb.append(abs);
    } else if (decExp <= 0) {
      sb.append("0.");
      sb.append("0".repeat(-decExp));
      sb.append(digits);
    } else if (decExp >= digits.length()) {
      sb.append(digits).append("0".repeat(decExp - digits.length())).append(".0");
    } else {
      sb.append(digits, 0, decExp).append('.').append(digits, decExp, digits.length());
    }
    return sb.toString();
  }
}
