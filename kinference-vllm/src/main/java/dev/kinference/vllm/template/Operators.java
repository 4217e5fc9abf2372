package dev.kinference.vllm.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Python's binary operators on template values: arithmetic (ints without overflow), comparisons, {@code in}. */
final class Operators {

  private Operators() {}

  static @Nullable Object arithmetic(String op, @Nullable Object l, @Nullable Object r) {
    if (op.equals("+")) {
      if (l instanceof String a && r instanceof String b) {
        return a + b;
      }
      if (l instanceof List<?> a && r instanceof List<?> b && (a instanceof Py.Tuple) == (b instanceof Py.Tuple)) {
        List<@Nullable Object> out = new ArrayList<>(a);
        out.addAll(b);
        return a instanceof Py.Tuple ? new Py.Tuple(out) : out;
      }
    }
    if (op.equals("%") && l instanceof String format) {
      return r instanceof Map<?, ?> m ? PercentFormat.format(format, m)
          : PercentFormat.format(format, r instanceof Py.Tuple t ? t : java.util.Collections.singletonList(r));
    }
    if (op.equals("*")) {
      if (l instanceof String s && (r instanceof Long || r instanceof Boolean)) {
        return s.repeat((int) Math.max(0, Py.toLong(r)));
      }
      if (l instanceof List<?> list && (r instanceof Long || r instanceof Boolean)) {
        List<@Nullable Object> out = new ArrayList<>();
        for (long i = 0; i < Py.toLong(r); i++) {
          out.addAll(list);
        }
        return out;
      }
    }
    if (!Py.isNumber(l) || !Py.isNumber(r)) {
      throw TemplateException.fail("unsupported operand types for " + op + ": " + Py.typeName(l) + " and "
          + Py.typeName(r));
    }
    if (Py.isInt(l) && Py.isInt(r) && !op.equals("/")) {
      return integerArithmetic(op, l, r);
    }
    double a = Py.toDouble(l);
    double b = Py.toDouble(r);
    return switch (op) {
      case "+" -> a + b;
      case "-" -> a - b;
      case "*" -> a * b;
      case "/" -> {
        if (b == 0) {
          throw TemplateException.fail("division by zero");
        }
        yield a / b;
      }
      case "//" -> {
        if (b == 0) {
          throw TemplateException.fail("division by zero");
        }
        yield Math.floor(a / b);
      }
      case "%" -> {
        if (b == 0) {
          throw TemplateException.fail("modulo by zero");
        }
        yield a - b * Math.floor(a / b);
      }
      case "**" -> Math.pow(a, b);
      default -> throw TemplateException.fail("unknown operator " + op);
    };
  }

  /** Python ints have no overflow: longs while they fit, {@link java.math.BigInteger} beyond. */
  private static Object integerArithmetic(String op, @Nullable Object l, @Nullable Object r) {
    if (!(l instanceof java.math.BigInteger) && !(r instanceof java.math.BigInteger)) {
      long a = Py.toLong(l);
      long b = Py.toLong(r);
      try {
        switch (op) {
          case "+" -> {
            return Math.addExact(a, b);
          }
          case "-" -> {
            return Math.subtractExact(a, b);
          }
          case "*" -> {
            return Math.multiplyExact(a, b);
          }
          case "//", "%" -> {
            if (b == 0) {
              throw TemplateException.fail(op.equals("%") ? "modulo by zero" : "division by zero");
            }
            if (a != Long.MIN_VALUE || b != -1) {
              return op.equals("%") ? Math.floorMod(a, b) : Math.floorDiv(a, b);
            }
          }
          default -> {} // ** and the one overflowing division: below
        }
      } catch (ArithmeticException overflow) {
        // below, exactly
      }
    }
    java.math.BigInteger a = Py.toBig(l);
    java.math.BigInteger b = Py.toBig(r);
    return switch (op) {
      case "+" -> Py.normalize(a.add(b));
      case "-" -> Py.normalize(a.subtract(b));
      case "*" -> Py.normalize(a.multiply(b));
      case "//", "%" -> {
        if (b.signum() == 0) {
          throw TemplateException.fail(op.equals("%") ? "modulo by zero" : "division by zero");
        }
        java.math.BigInteger[] qr = a.divideAndRemainder(b);
        if (qr[1].signum() != 0 && qr[1].signum() != b.signum()) { // floor, as Python
          qr[0] = qr[0].subtract(java.math.BigInteger.ONE);
          qr[1] = qr[1].add(b);
        }
        yield Py.normalize(op.equals("%") ? qr[1] : qr[0]);
      }
      case "**" -> {
        if (b.signum() < 0) {
          yield Math.pow(a.doubleValue(), b.doubleValue());
        }
        if (b.bitLength() > 16 && a.abs().compareTo(java.math.BigInteger.ONE) > 0) {
          throw TemplateException.fail("exponent too large: " + b);
        }
        yield Py.normalize(a.pow(b.intValueExact()));
      }
      default -> throw TemplateException.fail("unknown operator " + op);
    };
  }

  static boolean compare(String op, @Nullable Object l, @Nullable Object r) {
    return switch (op) {
      case "==" -> Py.equal(l, r);
      case "!=" -> !Py.equal(l, r);
      case "<" -> Py.compare(l, r) < 0;
      case "<=" -> Py.compare(l, r) <= 0;
      case ">" -> Py.compare(l, r) > 0;
      case ">=" -> Py.compare(l, r) >= 0;
      case "in" -> contains(r, l);
      case "not in" -> !contains(r, l);
      default -> throw TemplateException.fail("unknown comparison " + op);
    };
  }

  static boolean contains(@Nullable Object container, @Nullable Object item) {
    if (container instanceof String s) {
      if (!(item instanceof String sub)) {
        throw TemplateException.fail("'in <string>' requires a string, not " + Py.typeName(item));
      }
      return s.contains(sub);
    }
    if (container instanceof Map<?, ?> m) {
      return m.containsKey(item) || m.keySet().stream().anyMatch(k -> Py.equal(k, item));
    }
    if (container instanceof List<?> l) {
      return l.stream().anyMatch(x -> Py.equal(x, item));
    }
    if (container instanceof Py.Undefined) {
      return false;
    }
    if (container instanceof Py.Namespace ns) {
      return ns.attributes.containsKey(item);
    }
    throw TemplateException.fail("argument of type " + Py.typeName(container) + " is not iterable");
  }
}
