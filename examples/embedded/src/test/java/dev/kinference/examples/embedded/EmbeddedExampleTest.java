package dev.kinference.examples.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class EmbeddedExampleTest {

  @Test
  void eachConversationStaysOnOneServerAndItsLaterTurnsHitTheCache() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    EmbeddedExample.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("(alice|bob): .*\\n  -> (vllm-\\d)  prompt=(\\d+) tokens, cached=(\\d+)").matcher(out);
    int decisions = 0;
    String aliceServer = null;
    int laterTurnsWithCache = 0;
    while (m.find()) {
      decisions++;
      if (m.group(1).equals("alice")) {
        if (aliceServer == null) {
          aliceServer = m.group(2);
        }
        assertThat(m.group(2)).isEqualTo(aliceServer);
      }
      if (Integer.parseInt(m.group(4)) > Integer.parseInt(m.group(3)) / 2) {
        laterTurnsWithCache++;
      }
    }
    assertThat(decisions).isEqualTo(6);
    assertThat(laterTurnsWithCache).as("all but the very first request reuse the shared system prompt")
        .isGreaterThanOrEqualTo(5);
    assertThat(out).contains("predicted-ttft");
  }
}
