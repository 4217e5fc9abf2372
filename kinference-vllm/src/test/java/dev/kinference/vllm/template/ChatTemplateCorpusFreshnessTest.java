package dev.kinference.vllm.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.kinference.testkit.CommandRun;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The renderings {@link ChatTemplateCorpusTest} and {@link ChatTemplateFeatureCorpusTest} compare with are still what
 * Python's Jinja2 produces: runs {@code src/test/python/render_corpus.py --check}, which renders everything again and
 * compares (renderings exactly, errors by kind). Needs python3 with Jinja2 ({@code apt-get install python3-jinja2})
 * and fails saying so without.
 */
class ChatTemplateCorpusFreshnessTest {

  static final String INSTALL = "this test needs python3 with Jinja2: apt-get install python3 python3-jinja2";

  @Test
  void committedRenderingsAreWhatJinja2Renders() throws Exception {
    String python = null;
    for (String candidate : List.of("python3", "/usr/bin/python3")) { // PATH's first, then the system's (apt's)
      if (run(candidate, "-c", "import jinja2").exit() == 0) {
        python = candidate;
        break;
      }
    }
    if (python == null) {
      fail(INSTALL);
      return;
    }
    CommandRun check = run(python, "src/test/python/render_corpus.py", "--check");
    assertThat(check.exit()).as(check.output()).isZero();
    assertThat(check.output()).contains("expected/ matches Jinja2");
  }

  private static CommandRun run(String... command) throws InterruptedException {
    return CommandRun.of(List.of(command), Duration.ofMinutes(2));
  }
}
