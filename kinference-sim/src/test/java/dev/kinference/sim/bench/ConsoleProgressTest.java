package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ConsoleProgressTest {

  @Test
  void outputToAFileGetsOneLinePerRunAndNoCarriageReturns() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ConsoleProgress progress = new ConsoleProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8), false);
    for (int run = 0; run < 2; run++) {
      for (double f = 0; f <= 1; f += 0.05) {
        progress.update(run, 2, run == 0 ? "kinference-precise" : "random", f);
      }
    }
    progress.done();

    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .isEqualTo("run 1/2 kinference-precise%nrun 2/2 random%n".formatted())
        .doesNotContain("\r");
  }

  @Test
  void aTerminalGetsTheBarRedrawnInPlace() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ConsoleProgress progress = new ConsoleProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8), true);
    progress.update(0, 1, "random", 0.5);
    progress.done();

    assertThat(bytes.toString(StandardCharsets.UTF_8)).startsWith("\r[###############...............]  50.0%");
  }
}
