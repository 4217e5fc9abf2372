package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DemoCommandTest {

  @Test
  void demoIsRegisteredWithHelp() {
    CliRun help = CliRun.of("demo", "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("Usage: kinference demo").contains("--concurrency").contains("--time-scale")
        .contains("--out").contains("--index");
  }

  @Test
  void invalidOptionsAreRejectedWithAMessage() {
    CliRun zero = CliRun.of("demo", "--concurrency", "0");
    assertThat(zero.status()).isEqualTo(2);
    assertThat(zero.err()).contains("concurrency must be positive");
    CliRun index = CliRun.of("demo", "--index", "exact");
    assertThat(index.status()).isEqualTo(2);
    assertThat(index.err()).contains("--index must be precise or approximate, not exact");
  }
}
