package dev.kinference.sim.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A miniature demo end to end: real servers, real HTTP, the embedded router, random routing, the report. */
class DemoTest {

  @Test
  void runsBothRoutersAndWritesTheReport(@TempDir Path dir) throws Exception {
    Demo.Options options = Demo.Options.builder().servers(2).gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B)
        .timeScale(10).concurrency(4).warmup(Duration.ofSeconds(2)).measure(Duration.ofSeconds(8))
        .workload(4, 2, 512, 64, 16).reportDir(dir).build();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Demo.Result result = Demo.of(options).run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(result.runs()).hasSize(2);
    assertThat(result.ours().router()).isEqualTo("kinference-approx");
    assertThat(result.random().router()).isEqualTo("random");
    assertThat(result.ours().requests()).isPositive();
    assertThat(result.random().requests()).isPositive();
    assertThat(result.ours().finished()).isPositive();
    assertThat(result.ours().promptTokens()).isPositive();
    assertThat(out).contains("TTFT median (s)", "goodput", "prefix cache hit rate", "Report: ");
    assertThat(result.report()).isEqualTo(dir.resolve("demo.html"));
    assertThat(Files.readString(result.report())).contains("echarts").contains("kinference-approx");
    assertThat(dir.resolve("demo.json")).exists();
  }
}
