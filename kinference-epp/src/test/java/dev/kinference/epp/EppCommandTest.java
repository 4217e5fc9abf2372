package dev.kinference.epp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code kinference epp}'s refusals of what it cannot run (usage errors exit 2, before anything starts). */
class EppCommandTest {

  static int run(String... args) {
    CommandLine cl = new CommandLine(new EppCommand());
    cl.setErr(new java.io.PrintWriter(java.io.Writer.nullWriter()));
    return cl.execute(args);
  }

  @Test
  void usageErrorsExitTwo() {
    assertThat(run()).as("neither --config nor --discovery").isEqualTo(2);
    assertThat(run("--config", "/no/such/dir")).isEqualTo(2);
    assertThat(run("--discovery", "no-such-source")).isEqualTo(2);
    assertThat(run("--discovery", "kubernetes", "--index", "exact")).isEqualTo(2);
    assertThat(run("--config", "/tmp", "--body-mode", "chunked")).isEqualTo(2);
    assertThat(run("--inference-pool", "qwen3")).as("no namespace").isEqualTo(2);
    assertThat(run("--inference-pool", "llm/Qwen_3")).as("not a Kubernetes name").isEqualTo(2);
    assertThat(run("--inference-pool", "llm/qwen3", "--discovery", "kubernetes")).isEqualTo(2);
    assertThat(run("--pool-model", "qwen3", "--discovery", "kubernetes")).isEqualTo(2);
    assertThat(run("--objectives", "--discovery", "kubernetes")).isEqualTo(2);
  }
}
