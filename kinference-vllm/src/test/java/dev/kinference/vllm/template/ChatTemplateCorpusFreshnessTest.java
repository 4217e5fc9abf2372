package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The renderings {@link ChatTemplateCorpusTest} compares with are still what Python's Jinja2 produces: runs
 * {@code src/test/python/render_corpus.py --check}, which renders the corpus again and compares (renderings exactly,
 * errors by kind). Needs python3 with Jinja2 ({@code apt-get install python3-jinja2}) and fails saying so without.
 */
class ChatTemplateCorpusFreshnessTest {

  static final String INSTALL = "this test needs python3 with Jinja2: apt-get install python3 python3-jinja2";

  @Test
  void committedRenderingsAreWhatJinja2Renders() throws Exception {
    Process process;
    try {
      process = new ProcessBuilder("python3", "src/test/python/render_corpus.py", "--check")
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      fail(INSTALL + " (" + e.getMessage() + ")");
      return;
    }
    String output;
    try (var in = process.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      fail("render_corpus.py --check did not finish in 120 s: " + output);
    }
    if (output.contains("needs Jinja2")) {
      fail(INSTALL + ": " + output.strip());
    }
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output).contains("expected/ matches Jinja2");
  }
}
