package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {

  @Test
  void benchHasHelpAndIsListed() {
    assertThat(CliRun.of("--help").out()).contains("bench");
    CliRun help = CliRun.of("bench", "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("--scenario").contains("--trace").contains("kinference-paper")
        .contains("sglang-cache-aware");
    // a bare percent sign in a description fails picocli's formatting and prints the raw text with a warning
    assertThat(help.out()).contains("--agentic").contains("10% of turns").doesNotContain("%%")
        .contains("toolagent_trace.jsonl");
  }

  @Test
  void aSmallBenchmarkWritesItsReportAndSaysWhere(@TempDir Path dir) {
    CliRun r = CliRun.of("bench", "--scenario", "smoke", "--routers", "kinference-precise,random", "--workloads",
        "shared-prefix", "--concurrency", "2", "--warmup", "1", "--duration", "3", "--no-progress", "--out",
        dir.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("== shared-prefix ==").contains("Report:").contains("smoke.html");
    assertThat(dir.resolve("smoke.html")).exists();
    assertThat(dir.resolve("smoke.json")).exists();
    assertThat(dir.resolve("smoke.csv")).exists();
  }

  @Test
  void theRoutersViewOfTheServersCanBeMadeStaler(@TempDir Path dir) {
    CliRun r = CliRun.of("bench", "--scenario", "smoke", "--routers", "kinference-precise", "--workloads",
        "unique", "--concurrency", "2", "--warmup", "1", "--duration", "3", "--scrape-interval", "500",
        "--metrics-delay", "20", "--kv-event-delay", "250", "--no-progress", "--out", dir.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("Router sees metrics every 500 ms (20 ms old), KV events after 250 ms");
  }

  @Test
  void routerReplicasRunOursAlsoAsReplicasSharingTheirAccountsAndOthersOnlyIndependent(@TempDir Path dir) {
    CliRun r = CliRun.of("bench", "--scenario", "smoke", "--routers", "kinference-precise,random", "--workloads",
        "unique", "--concurrency", "2", "--warmup", "1", "--duration", "3", "--router-replicas", "2",
        "--no-progress", "--out", dir.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("Router replicas").contains("kinference-precise@1").contains("kinference-precise@2")
        .contains("kinference-precise@2s").contains("random@2").doesNotContain("random@2s");
    CliRun bad = CliRun.of("bench", "--scenario", "smoke", "--routers", "random@2s", "--out", dir.toString());
    assertThat(bad.status()).isEqualTo(2);
    assertThat(bad.err()).contains("share their in-flight accounts");
  }

  @Test
  void theWorkloadsCanBeReshaped(@TempDir Path dir) {
    CliRun r = CliRun.of("bench", "--scenario", "smoke", "--routers", "random", "--workloads",
        "shared-prefix,multi-turn", "--shared-prefix", "4,2,512,64,16", "--multi-turn", "1,100,2,3,50,20,500",
        "--concurrency", "2", "--warmup", "1", "--duration", "3", "--no-progress", "--out", dir.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("== shared-prefix ==\n4 groups x 2 users, 512-token system prompt + 64-token "
        + "question, 16 output").contains("== multi-turn ==\n2-3 turns of 50-token messages and 20-token answers, "
        + "1 system prompts of 100 tokens, think time 0.5 s");
    CliRun bad = CliRun.of("bench", "--scenario", "smoke", "--shared-prefix", "4,2,512", "--out", dir.toString());
    assertThat(bad.status()).isEqualTo(2);
    assertThat(bad.err()).contains("GROUPS,USERS,SYSTEM,QUESTION,OUTPUT");
    CliRun word = CliRun.of("bench", "--scenario", "smoke", "--multi-turn", "4,lots", "--out", dir.toString());
    assertThat(word.status()).isEqualTo(2);
    assertThat(word.err()).contains("--multi-turn").contains("lots");
  }

  @Test
  void anyScenarioRunsOnAFleetOfTheGivenSizeGpuAndModel(@TempDir Path dir) {
    CliRun r = CliRun.of("bench", "--scenario", "smoke", "--routers", "kinference-precise", "--workloads", "unique",
        "--concurrency", "2", "--warmup", "1", "--duration", "2", "--servers", "16", "--gpu", "l40s", "--model",
        "qwen3-32b", "--tensor-parallel", "2", "--no-progress", "--out", dir.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("servers overridden: 16x (2x L40S, Qwen3-32B)").contains("Servers: 16 x ");
    CliRun gpu = CliRun.of("bench", "--scenario", "smoke", "--gpu", "tpu", "--out", dir.toString());
    assertThat(gpu.status()).isEqualTo(2);
    assertThat(gpu.err()).contains("unknown GPU 'tpu'").contains("H100");
    CliRun many = CliRun.of("bench", "--scenario", "smoke", "--servers", "5000", "--out", dir.toString());
    assertThat(many.status()).isEqualTo(2);
    assertThat(many.err()).contains("--servers must be 1 to 4096: 5000");
    CliRun none = CliRun.of("bench", "--scenario", "smoke", "--servers", "0", "--out", dir.toString());
    assertThat(none.status()).as("--servers 0 is refused, not read as the scenario's fleet").isEqualTo(2);
    assertThat(none.err()).contains("--servers must be 1 to 4096: 0");
    CliRun noGpus = CliRun.of("bench", "--scenario", "smoke", "--tensor-parallel", "0", "--out", dir.toString());
    assertThat(noGpus.status()).isEqualTo(2);
    assertThat(noGpus.err()).contains("--tensor-parallel must be 1 to 64: 0");
  }

  @Test
  void badInputGetsAClearErrorAndExitCode(@TempDir Path dir) {
    CliRun unknown = CliRun.of("bench", "--scenario", "nope", "--out", dir.toString());
    assertThat(unknown.status()).isEqualTo(2);
    assertThat(unknown.err()).contains("unknown scenario 'nope'").contains("kinference-paper");
    CliRun missing = CliRun.of("bench", "--trace", dir.resolve("missing.jsonl").toString(), "--out", dir.toString());
    assertThat(missing.status()).isEqualTo(2);
    assertThat(missing.err()).contains("missing.jsonl");
    CliRun noScrapes = CliRun.of("bench", "--scenario", "smoke", "--scrape-interval", "0", "--out", dir.toString());
    assertThat(noScrapes.status()).isEqualTo(2);
    assertThat(noScrapes.err()).contains("the scrape interval must be positive: 0 ms");
  }

  @Test
  void theLadderRunsOnlyLlmdsPublishedSetupAndSaysWhatItRefuses(@TempDir Path dir) {
    assertThat(CliRun.of("bench", "--help").out()).contains("--ladder=MODE").contains("llm-d-estimated")
        .contains("kinference-precise-no-tier");
    CliRun scenario = CliRun.of("bench", "--ladder", "drain", "--out", dir.toString());
    assertThat(scenario.status()).isEqualTo(2);
    assertThat(scenario.err()).contains("use it with --scenario llm-d");
    CliRun mode = CliRun.of("bench", "--scenario", "llm-d", "--ladder", "sometimes", "--out", dir.toString());
    assertThat(mode.status()).isEqualTo(2);
    assertThat(mode.err()).contains("--ladder takes drain or continuous, not 'sometimes'");
    CliRun sweep = CliRun.of("bench", "--scenario", "llm-d", "--ladder", "continuous", "--rate", "3", "--servers",
        "4", "--out", dir.toString());
    assertThat(sweep.status()).isEqualTo(2);
    assertThat(sweep.err()).contains("does not take [--rate, fleet options]");
    // the EPP's shedding turns requests away, which only the ladder's open loop and table account for
    CliRun shedding = CliRun.of("bench", "--scenario", "smoke", "--routers", "random+shed", "--out", dir.toString());
    assertThat(shedding.status()).isEqualTo(2);
    assertThat(shedding.err()).contains("router 'random+shed': +shed (the EPP's shedding) runs with --ladder only");
    assertThat(CliRun.of("bench", "--help").out()).contains("NAME+shed");
    assertThat(dir).isEmptyDirectory();
  }
}
