package dev.kinference.gateway.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DemoCommandTest {

  @Test
  void demoIsRegisteredWithHelp() {
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new KinferenceCommand());
    cli.setOut(new PrintWriter(out));
    assertThat(cli.execute("demo", "--help")).isZero();
    assertThat(out.toString()).contains("Usage: kinference demo").contains("--concurrency").contains("--time-scale")
        .contains("--out").contains("--index");
  }

  @Test
  void invalidOptionsAreRejectedWithAMessage() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new KinferenceCommand());
    cli.setErr(new PrintWriter(err));
    assertThat(cli.execute("demo", "--concurrency", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("concurrency must be positive");
    assertThat(cli.execute("demo", "--index", "exact")).isEqualTo(2);
    assertThat(err.toString()).contains("--index must be precise or approximate, not exact");
  }
}
