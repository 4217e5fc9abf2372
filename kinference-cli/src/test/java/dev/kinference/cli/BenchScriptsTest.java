package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.kinference.testkit.CommandRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed-by-seed bench scripts ({@code bench/paired-seeds.py}, {@code bench/replicas-seeds.py}), their shared
 * statistics ({@code bench/paired_stats.py}) and per-seed layout ({@code bench/seed_runs.py}): runs the scripts' own
 * Python tests, then each script on what {@code kinference bench} really writes (its JSON and its printed replicas
 * table), so a change of the bench's output that the scripts no longer read fails here. Also {@code
 * bench/report-svg.py} on the HTML report the bench writes. Needs python3 ({@code apt-get install python3}) and, for
 * the report's images, chromium ({@code apt-get install chromium}), and fails saying so without.
 */
class BenchScriptsTest {

  static final String INSTALL = "this test needs python3: apt-get install python3";
  static final Path BENCH = Path.of("..", "bench");

  @Test
  void theStatisticsAndTheScriptsPassTheirPythonTests() throws Exception {
    CommandRun tests = python(BENCH.resolve("test_paired_stats.py").toString());
    assertThat(tests.exit()).as(tests.output()).isZero();
    assertThat(tests.output()).contains("OK").doesNotContain("FAIL");
  }

  @Test
  void pairedSeedsComparesRoutersSeedBySeedOnTheBenchsJson(@TempDir Path dir) throws Exception {
    for (int seed = 1; seed <= 3; seed++) {
      CliRun r = smokeBench(dir.resolve("seed-" + seed), seed, "kinference-precise,random");
      assertThat(r.status()).as(r.err()).isZero();
    }
    CommandRun summary = python(BENCH.resolve("paired-seeds.py").toString(), "summarize", dir.toString());
    assertThat(summary.exit()).as(summary.output()).isZero();
    assertThat(summary.output()).startsWith("shared-prefix  random               n=  3 ours ")
        .containsPattern("diff [ +-]+\\d+\\.\\d\\d \\[[ +-]+\\d+\\.\\d\\d, [ +-]+\\d+\\.\\d\\d\\] ahead/behind on "
            + "\\d/\\d seeds: (ahead|level|behind)");
  }

  @Test
  void replicasSeedsReadsTheBenchsJsonAndPrintedReplicasTable(@TempDir Path dir) throws Exception {
    for (int seed = 1; seed <= 2; seed++) {
      Path out = dir.resolve("seed-" + seed);
      CliRun r = smokeBench(out, seed, "kinference-precise", "--router-replicas", "2");
      assertThat(r.status()).as(r.err()).isZero();
      Files.writeString(dir.resolve("seed-" + seed + ".txt"), r.out()); // what the script keeps of each seed's run
    }
    CommandRun summary = python(BENCH.resolve("replicas-seeds.py").toString(), "--analyze-only", "--seeds", "2",
        "--first-seed", "1", "--dir", dir.toString(), "--scenario", "smoke", "--replicas", "2", "--routers",
        "kinference-precise", "--workloads", "shared-prefix");
    assertThat(summary.exit()).as(summary.output()).isZero();
    // the hit rate and herding columns are filled (the printed table was read), and each replica row has a verdict
    assertThat(summary.output()).contains("2 seeds (1-2)")
        .containsPattern("shared-prefix +kinference-precise +1 +[\\d.]+ +[\\d.]+ +[\\d.]+% +[\\d.]+%")
        .containsPattern("kinference-precise +2 .*% \\[.*%\\] .*(met|missed|undecided)")
        .containsPattern("kinference-precise +2s .*(met|missed|undecided) +vs @2: ");
  }

  @Test
  void reportSvgWritesOneImagePerWorkloadWithEachOfItsCharts(@TempDir Path dir) throws Exception {
    CliRun bench = CliRun.of("bench", "--scenario", "smoke", "--routers", "kinference-precise,random", "--workloads",
        "shared-prefix,unique", "--concurrency", "2,8", "--warmup", "1", "--duration", "3", "--threads", "1",
        "--repeat", "1", "--no-progress", "--out", dir.toString());
    assertThat(bench.status()).as(bench.err()).isZero();
    Path images = dir.resolve("img");
    // without chromium the script exits saying "apt-get install chromium", which the assertion shows
    CommandRun svg = python(BENCH.resolve("report-svg.py").toString(), dir.resolve("smoke.html").toString(),
        images.toString());
    assertThat(svg.exit()).as(svg.output()).isZero();
    for (String workload : List.of("shared-prefix", "unique")) {
      String image = Files.readString(images.resolve("smoke-" + workload + ".svg"));
      // six lines against load and four bar charts, each a nested <svg> placed in its column
      assertThat(Pattern.compile("<svg x=\"").matcher(image).results().count()).as(workload).isEqualTo(10);
      assertThat(image).contains("Workload: " + workload).contains(">kinference-precise</text>")
          .contains(">random</text>").contains("peak goodput over the sweep");
    }
    try (Stream<Path> files = Files.list(images)) {
      assertThat(files).hasSize(2);
    }
  }

  private static CliRun smokeBench(Path out, int seed, String routers, String... more) {
    List<String> args = new ArrayList<>(List.of("bench", "--scenario", "smoke", "--routers", routers, "--workloads",
        "shared-prefix", "--concurrency", "4", "--warmup", "1", "--duration", "5", "--threads", "1", "--seed",
        String.valueOf(seed), "--repeat", "1", "--no-progress", "--out", out.toString()));
    args.addAll(List.of(more));
    return CliRun.of(args.toArray(String[]::new));
  }

  private static CommandRun python(String... args) throws InterruptedException {
    for (String candidate : List.of("python3", "/usr/bin/python3")) { // PATH's first, then the system's (apt's)
      List<String> command = new ArrayList<>(List.of(candidate));
      command.addAll(List.of(args));
      CommandRun result = CommandRun.of(command, Duration.ofMinutes(2));
      if (result.started()) {
        return result;
      }
    }
    fail(INSTALL);
    throw new AssertionError(INSTALL);
  }
}
