package dev.kinference.gateway.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class BenchCommandTest {

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(new KinferenceCommand());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void benchHasHelpAndIsListed() {
    assertThat(run("--help").out()).contains("bench");
    Run help = run("bench", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("--scenario").contains("--trace").contains("kinference-paper")
        .contains("sglang-cache-aware");
  }

  @Test
  void aSmallBenchmarkWritesItsReportAndSaysWhere(@TempDir Path dir) {
    Run r = run("bench", "--scenario", "smoke", "--routers", "kinference-precise,random", "--workloads",
        "shared-prefix", "--concurrency", "2", "--warmup", "1", "--duration", "3", "--no-progress", "--out",
        dir.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("== shared-prefix ==").contains("Report:").contains("smoke.html");
    assertThat(dir.resolve("smoke.html")).exists();
    assertThat(dir.resolve("smoke.json")).exists();
    assertThat(dir.resolve("smoke.csv")).exists();
  }

  @Test
  void badInputGetsAClearErrorAndExitCode(@TempDir Path dir) {
    Run unknown = run("bench", "--scenario", "nope", "--out", dir.toString());
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).contains("unknown scenario 'nope'").contains("kinference-paper");
    Run missing = run("bench", "--trace", dir.resolve("missing.jsonl").toString(), "--out", dir.toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("missing.jsonl");
  }
}
