package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class NewPrefixHeadroomScorerTest {

  private static final ApproximateTokenizer TOKENIZER = new ApproximateTokenizer();
  private static final InferenceRequest REQUEST = InferenceRequest.builder("test-model")
      .system("Shared manual. " + "word ".repeat(1500)).user("a question").build();
  private static final TokenizedPrompt PROMPT = TokenizedPrompt.of(TOKENIZER, TOKENIZER.tokenize(REQUEST), REQUEST);
  private static final int PROMPT_BLOCKS = (PROMPT.tokenCount() + 15) / 16;

  private final EndpointState[] endpoints = {endpoint(0), endpoint(1), endpoint(2)};
  private final NewPrefixHeadroomScorer scorer = new NewPrefixHeadroomScorer();

  /**
   * Regression: placed by predicted TTFT alone, the first prompts of llm-d's 150 groups went wherever a prefill queue
   * was momentarily shortest, the groups' shares of the servers drifted apart, and one server ran out of KV memory up
   * to 40 s before it did under SGLang's router: 860.2 against 879.8 requests/min at 15 QPS (21 seeds). Placed by free
   * KV among the about equally fast: 878.0 (docs/BENCHMARKS.md, "New prefixes placed by free KV").
   */
  @Test
  void aLongPromptNobodyHoldsGoesWhereTheMostKvIsFreeAmongTheAboutEquallyFast() {
    metrics(0.40, 0.20, 0.30);
    assertThat(scores(new double[] {0.20, 0.25, 0.50}, new int[3]))
        .as("e0 predicts fastest but is the fullest; e2 is 300 ms behind the fastest, beyond the slack")
        .containsExactly(0.0, 1.0, 0.0);
    assertThat(scores(new double[] {0.20, 0.25, 0.22}, new int[3]))
        .as("all within 100 ms: by free KV, min-max normalised").containsExactly(new double[] {0.0, 1.0, 0.5}, within(1e-9));
  }

  @Test
  void requestsSentSinceTheLastScrapeCountAsUsedKvSoOneScrapeDoesNotHerdEveryNewPrefixOntoOneEndpoint() {
    metrics(0.30, 0.20, 0.30);
    long blocks = PROMPT_BLOCKS * 10L;
    endpoints[1].onDispatched((int) (blocks * 16 * 0.15));
    assertThat(endpoints[1].estimatedKvUsage()).isCloseTo(0.35, within(1e-3));
    assertThat(scores(new double[] {0.2, 0.2, 0.2}, new int[3])).containsExactly(1.0, 0.0, 1.0);
  }

  @Test
  void scoresNothingForAShortPromptAPromptSomeoneHoldsOrASaturatedFleet() {
    double[] even = {0.2, 0.2, 0.2};
    metrics(0.40, 0.20, 0.30);
    assertThat(scores(even, new int[] {0, PROMPT_BLOCKS / 2, 0})).as("half of it held on e1: prefix terms decide")
        .containsExactly(0.0, 0.0, 0.0);
    assertThat(scores(even, new int[] {0, PROMPT_BLOCKS / 5, 0})).as("a fifth held is still new")
        .containsExactly(new double[] {0.0, 1.0, 0.5}, within(1e-9));

    for (EndpointState e : endpoints) {
      e.updateMetrics(EndpointMetrics.of(0, 10, 0.2, 0L).withCacheConfig(16, PROMPT_BLOCKS * 100L));
    }
    endpoints[0].updateMetrics(EndpointMetrics.of(0, 10, 0.4, 0L).withCacheConfig(16, PROMPT_BLOCKS * 100L));
    assertThat(scores(even, new int[3])).as("a hundredth of the cache: short, predicted TTFT decides")
        .containsExactly(0.0, 0.0, 0.0);

    metrics(0.40, 0.20, 0.30);
    endpoints[2].updateMetrics(EndpointMetrics.of(6, 40, 0.30, 0L).withCacheConfig(16, PROMPT_BLOCKS * 10L));
    assertThat(scores(even, new int[3])).as("e2 saturated (6 waiting): placement by load, not memory")
        .containsExactly(0.0, 0.0, 0.0);
  }

  @Test
  void parametersAreValidated() {
    assertThatThrownBy(() -> new NewPrefixHeadroomScorer(0, 0.3, Duration.ofMillis(100)))
        .hasMessageContaining("minCacheShare");
    assertThatThrownBy(() -> new NewPrefixHeadroomScorer(0.02, 1.5, Duration.ofMillis(100)))
        .hasMessageContaining("maxHeldShare");
    assertThatThrownBy(() -> new NewPrefixHeadroomScorer(0.02, 0.3, Duration.ZERO))
        .hasMessageContaining("ttftSlack");
    assertThat(scorer.parameters().asMap()).containsEntry("maxHeldShare", 0.3)
        .containsEntry("ttftSlack", Duration.ofMillis(100));
  }

  /** Unsaturated endpoints whose caches each hold ten such prompts, at these scraped KV usages. */
  private void metrics(double... kvUsage) {
    for (int i = 0; i < endpoints.length; i++) {
      endpoints[i].updateMetrics(EndpointMetrics.of(0, 10, kvUsage[i], 0L).withCacheConfig(16, PROMPT_BLOCKS * 10L));
    }
  }

  private double[] scores(double[] predictedTtftSeconds, int[] matchedBlocks) {
    RoutingContext context = RoutingContext.forTesting(REQUEST, PROMPT, endpoints, matchedBlocks,
        new int[] {16, 16, 16}, predictedTtftSeconds, 0L, new SplittableRandom(1));
    double[] scores = new double[endpoints.length];
    scorer.score(context, scores);
    return scores;
  }

  private static EndpointState endpoint(int i) {
    return EndpointState.detached(Endpoint.of("e" + i, "http://127.0.0.1:" + (9000 + i), "test-model"), i);
  }
}
