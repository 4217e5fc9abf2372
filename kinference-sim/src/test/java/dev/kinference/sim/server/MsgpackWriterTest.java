package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class MsgpackWriterTest {

  private static String hex(MsgpackWriter w) {
    return HexFormat.of().formatHex(w.toByteArray());
  }

  @Test
  void integersUseTheSmallestEncodingAsMsgspecDoes() {
    assertThat(hex(new MsgpackWriter().integer(0))).isEqualTo("00");
    assertThat(hex(new MsgpackWriter().integer(127))).isEqualTo("7f");
    assertThat(hex(new MsgpackWriter().integer(128))).isEqualTo("cc80");
    assertThat(hex(new MsgpackWriter().integer(65535))).isEqualTo("cdffff");
    assertThat(hex(new MsgpackWriter().integer(65536))).isEqualTo("ce00010000");
    assertThat(hex(new MsgpackWriter().integer(1L << 32))).isEqualTo("cf0000000100000000");
    assertThat(hex(new MsgpackWriter().integer(-1))).isEqualTo("ff");
    assertThat(hex(new MsgpackWriter().integer(-32))).isEqualTo("e0");
    assertThat(hex(new MsgpackWriter().integer(-33))).isEqualTo("d0df");
    assertThat(hex(new MsgpackWriter().integer(-129))).isEqualTo("d1ff7f");
    assertThat(hex(new MsgpackWriter().integer(Long.MIN_VALUE))).isEqualTo("d38000000000000000");
  }

  @Test
  void unsigned64BitHashesAtOrAbove2To63AreUint64() {
    long hash = new BigInteger("15760518052499183552").longValue();
    assertThat(hex(new MsgpackWriter().unsigned(hash))).isEqualTo("cfdab89baa7b5857c0");
    assertThat(hex(new MsgpackWriter().unsigned(-1L))).isEqualTo("cfffffffffffffffff");
    assertThat(Msgpack.decode(new MsgpackWriter().unsigned(-1L).toByteArray()))
        .isEqualTo(new BigInteger("18446744073709551615"));
  }

  @Test
  void stringsFloatsAndContainers() {
    assertThat(hex(new MsgpackWriter().str("type"))).isEqualTo("a474797065");
    assertThat(hex(new MsgpackWriter().str("x".repeat(32)))).startsWith("d920");
    assertThat(hex(new MsgpackWriter().str("x".repeat(256)))).startsWith("da0100");
    assertThat(hex(new MsgpackWriter().float64(1789095808.8378847))).isEqualTo("cb41daa8dbe0359fe7");
    assertThat(hex(new MsgpackWriter().arrayHeader(3))).isEqualTo("93");
    assertThat(hex(new MsgpackWriter().arrayHeader(16))).isEqualTo("dc0010");
    assertThat(hex(new MsgpackWriter().mapHeader(11))).isEqualTo("8b");
    assertThat(hex(new MsgpackWriter().mapHeader(70000))).isEqualTo("df00011170");
    assertThat(hex(new MsgpackWriter().nil().bool(true).bool(false))).isEqualTo("c0c3c2");
    assertThat(hex(new MsgpackWriter().bin(new byte[] {1, 2}))).isEqualTo("c4020102");
  }
}
