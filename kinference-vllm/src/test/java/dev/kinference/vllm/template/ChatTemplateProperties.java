package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigInteger;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** Properties of Python's semantics that hold for every value, not only the corpus's. */
class ChatTemplateProperties {

  static final ObjectMapper JSON = new ObjectMapper();

  /** tojson writes JSON that reads back as the same string; with ensure_ascii the text is ASCII only. */
  @Property(tries = 500)
  void tojsonRoundTripsAnyString(@ForAll String s) throws Exception {
    String plain = ChatTemplate.compile("{{ s | tojson }}").render(Map.of("s", s));
    String ascii = ChatTemplate.compile("{{ s | tojson(ensure_ascii=true) }}").render(Map.of("s", s));
    assertThat(JSON.readValue(plain, String.class)).isEqualTo(s);
    assertThat(JSON.readValue(ascii, String.class)).isEqualTo(s);
    assertThat(ascii.chars().allMatch(c -> c >= 0x20 && c < 0x7f)).isTrue();
  }

  /** Integer arithmetic never overflows: it equals exact arithmetic with Python's floor division and modulo. */
  @Property(tries = 1000)
  void integerArithmeticIsExact(@ForAll long a, @ForAll long b) throws Exception {
    BigInteger x = BigInteger.valueOf(a);
    BigInteger y = BigInteger.valueOf(b);
    String rendered = ChatTemplate.compile("{{ a + b }} {{ a - b }} {{ a * b }}").render(Map.of("a", a, "b", b));
    assertThat(rendered).isEqualTo(x.add(y) + " " + x.subtract(y) + " " + x.multiply(y));
    if (b != 0) {
      BigInteger[] qr = x.divideAndRemainder(y);
      if (qr[1].signum() != 0 && qr[1].signum() != y.signum()) {
        qr = new BigInteger[] {qr[0].subtract(BigInteger.ONE), qr[1].add(y)};
      }
      assertThat(ChatTemplate.compile("{{ a // b }} {{ a % b }}").render(Map.of("a", a, "b", b)))
          .isEqualTo(qr[0] + " " + qr[1]);
    }
  }
}
