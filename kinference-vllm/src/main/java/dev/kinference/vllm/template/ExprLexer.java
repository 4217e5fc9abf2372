package dev.kinference.vllm.template;

import java.util.ArrayList;
import java.util.List;

/** Tokens of a tag's content: names, string and number literals, operators. */
final class ExprLexer {

  enum Type {
    NAME, STRING, INT, FLOAT, OP, EOF
  }

  record Token(Type type, String text, Object value) {
    boolean is(String op) {
      return (type == Type.OP || type == Type.NAME) && text.equals(op);
    }
  }

  private static final String[] OPS = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
      "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|"};

  private ExprLexer() {}

  static List<Token> tokenize(String s, int line) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int n = s.length();
    while (i < n) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
        continue;
      }
      if (Character.isLetter(c) || c == '_') {
        int j = i + 1;
        while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
          j++;
        }
        String name = s.substring(i, j);
        out.add(new Token(Type.NAME, name, name));
        i = j;
        continue;
      }
      if (c == '0' && i + 2 < n && "xXoObB".indexOf(s.charAt(i + 1)) >= 0) {
        // Jinja2's 0x1F, 0o17 and 0b101 (with optional underscores), as Python writes them
        int radix = switch (Character.toLowerCase(s.charAt(i + 1))) {
          case 'x' -> 16;
          case 'o' -> 8;
          default -> 2;
        };
        int j = i + 2;
        while (j < n && (Character.digit(s.charAt(j), radix) >= 0 || s.charAt(j) == '_')) {
          j++;
        }
        String digits = s.substring(i + 2, j).replace("_", "");
        if (!digits.isEmpty()) {
          out.add(new Token(Type.INT, s.substring(i, j), Py.normalize(new java.math.BigInteger(digits, radix))));
          i = j;
          continue;
        }
      }
      if (Character.isDigit(c)) {
        int j = i;
        while (j < n && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_')) {
          j++;
        }
        boolean isFloat = false;
        if (j + 1 < n && s.charAt(j) == '.' && Character.isDigit(s.charAt(j + 1))) {
          isFloat = true;
          j++;
          while (j < n && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_')) {
            j++;
          }
        }
        if (j < n && (s.charAt(j) == 'e' || s.charAt(j) == 'E')) {
          int k = j + 1;
          if (k < n && (s.charAt(k) == '+' || s.charAt(k) == '-')) {
            k++;
          }
          if (k < n && Character.isDigit(s.charAt(k))) {
            isFloat = true;
            j = k;
            while (j < n && Character.isDigit(s.charAt(j))) {
              j++;
            }
          }
        }
        String text = s.substring(i, j).replace("_", "");
        out.add(isFloat ? new Token(Type.FLOAT, text, Double.parseDouble(text))
            : new Token(Type.INT, text, Py.normalize(new java.math.BigInteger(text))));
        i = j;
        continue;
      }
      if (c == '\'' || c == '"') {
        StringBuilder sb = new StringBuilder();
        int j = i + 1;
        while (j < n && s.charAt(j) != c) {
          char d = s.charAt(j);
          if (d == '\\' && j + 1 < n) {
            char e = s.charAt(j + 1);
            j += 2;
            switch (e) {
              case 'n' -> sb.append('\n');
              case 't' -> sb.append('\t');
              case 'r' -> sb.append('\r');
              case 'b' -> sb.append('\b');
              case 'f' -> sb.append('\f');
              case '0' -> sb.append('\0');
              case '\\' -> sb.append('\\');
              case '\'' -> sb.append('\'');
              case '"' -> sb.append('"');
              case '\n' -> {}
              case 'x', 'u', 'U' -> {
                int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                if (j + len > n) {
                  throw TemplateException.fail("line " + line + ": bad \\" + e + " escape");
                }
                sb.appendCodePoint(Integer.parseInt(s.substring(j, j + len), 16));
                j += len;
              }
              default -> sb.append('\\').append(e);
            }
            continue;
          }
          sb.append(d);
          j++;
        }
        if (j >= n) {
          throw TemplateException.fail("line " + line + ": unterminated string literal");
        }
        out.add(new Token(Type.STRING, s.substring(i, j + 1), sb.toString()));
        i = j + 1;
        continue;
      }
      String op = null;
      for (String o : OPS) {
        if (s.startsWith(o, i)) {
          op = o;
          break;
        }
      }
      if (op == null) {
        throw TemplateException.fail("line " + line + ": unexpected character '" + c + "'");
      }
      out.add(new Token(Type.OP, op, op));
      i += op.length();
    }
    out.add(new Token(Type.EOF, "", ""));
    return out;
  }
}
