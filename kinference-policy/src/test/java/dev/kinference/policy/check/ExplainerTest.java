package dev.kinference.policy.check;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.TrafficClass;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ExplainerTest {

  private static final Path EXAMPLES = Path.of("..", "examples", "policies");

  @Test
  void theCheckerAcceptsTheExampleConfiguration() {
    StringWriter out = new StringWriter();
    int status = PolicyChecker.run(List.of(EXAMPLES), true, new PrintWriter(out));
    assertThat(status).as(out.toString()).isEqualTo(PolicyChecker.OK);
    assertThat(out.toString()).contains("checked 5 files: 2 pools, 2 aliases, 1 providers, 3 tenants, 1 policies "
        + "(6 rules); 0 errors, 0 warnings");
  }

  @Test
  void theCheckerFailsOnErrorsAndOnWarningsWhenStrict() {
    Path broken = Path.of("src", "test", "resources", "broken");
    StringWriter out = new StringWriter();
    assertThat(PolicyChecker.run(List.of(broken.resolve("unknown-fields.yaml")), false, new PrintWriter(out)))
        .isEqualTo(PolicyChecker.PROBLEMS);
    assertThat(out.toString()).contains("unknown-fields.yaml:6:3: error: spec.modle: unknown field (did you mean "
        + "'model'?)");
    assertThat(PolicyChecker.run(List.of(broken.resolve("shadowed-rules.yaml")), false, new PrintWriter(out)))
        .isEqualTo(PolicyChecker.OK);
    assertThat(PolicyChecker.run(List.of(broken.resolve("shadowed-rules.yaml")), true, new PrintWriter(out)))
        .isEqualTo(PolicyChecker.PROBLEMS);
  }

  @Test
  void explainsWhichRulesFireAndWhereTheRequestGoes() {
    PolicyConfig config = PolicyLoader.load(EXAMPLES).orThrow();
    InferenceRequest simple = InferenceRequest.builder("chat").user("What is the capital of France?")
        .tenant("search").build();
    String text = Explainer.explain(config, simple, Set.of());
    assertThat(text).contains("default/simple-prompts-to-small-model: route alias chat-small -> pool small",
        "verdict: proceed as model Qwen/Qwen3-8B", "route: 10.0.0.1", "external:openai/gpt-4o-mini");

    InferenceRequest pii = InferenceRequest.builder("chat").user("Explain step by step and compare: refund for "
        + "jane.doe@example.com, design a reply").tenant("search").build();
    String saturated = Explainer.explain(config, pii, Set.of("large"));
    assertThat(saturated).contains("personal data: email", "default/search-bursts-to-cloud: fallback openai/gpt-4o",
        "builtin/local-only: fallbacks dropped (openai/gpt-4o)", "queued locally", "route: large/selector");

    InferenceRequest batch = InferenceRequest.builder("chat-small").user("Summarize: " + "text ".repeat(50))
        .tenant("analytics").trafficClass(TrafficClass.BATCH).build();
    assertThat(Explainer.explain(config, batch, Set.of("small"))).contains("verdict: reject 429",
        "(Retry-After 60 s)");
  }
}
