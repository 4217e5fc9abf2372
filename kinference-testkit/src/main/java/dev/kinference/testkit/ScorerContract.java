package dev.kinference.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RoutingContext;
import dev.kinference.routing.Scorer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link Scorer}: a stable name, a score in [0, 1] for every candidate and nothing written past
 * them, whatever the endpoints' state (no metrics, stale, loaded, identical), safe concurrent use, and parameters
 * declared with valid defaults.
 */
public abstract class ScorerContract {

  /** For subclasses. */
  protected ScorerContract() {}

  /** A fresh scorer under test. */
  protected abstract Scorer createScorer();

  @Test
  void nameIsStableLowerCaseAndNonBlank() {
    Scorer scorer = createScorer();
    assertThat(scorer.name()).isNotBlank().matches("[a-z0-9][a-z0-9.-]*");
    assertThat(createScorer().name()).isEqualTo(scorer.name());
  }

  /**
   * The parameter channel: every declared default is accepted, the scorer {@link Scorer#create} makes from the
   * defaults has the same name and reports those values, and the instance's own values are ones its declaration
   * accepts.
   */
  @Test
  void parametersAreDeclaredWithValidDefaultsAndReportedBack() {
    Scorer scorer = createScorer();
    Parameters defaults = Parameters.defaults(scorer.declaredParameters());
    assertThat(defaults.asMap().keySet()).containsExactlyElementsOf(
        scorer.declaredParameters().stream().map(Parameter::name).toList());
    Scorer made = scorer.create(defaults, System::nanoTime);
    assertThat(made.name()).isEqualTo(scorer.name());
    assertThat(made.parameters()).isEqualTo(defaults);
    assertThat(Parameters.problems(scorer.declaredParameters(), scorer.parameters().asMap())).isEmpty();
  }

  @Test
  void scoresEveryCandidateWithinZeroAndOne() {
    Scorer scorer = createScorer();
    SplittableRandom random = new SplittableRandom(42);
    for (int n : new int[] {1, 2, 3, 8, 64, 100}) {
      for (int round = 0; round < 20; round++) {
        RoutingContext context = randomContext(n, random);
        double[] scores = new double[n + 4];
        java.util.Arrays.fill(scores, -7);
        scorer.score(context, scores);
        for (int i = 0; i < n; i++) {
          assertThat(scores[i]).as("score of candidate %d of %d", i, n).isBetween(0.0, 1.0);
        }
        for (int i = n; i < scores.length; i++) {
          assertThat(scores[i]).as("nothing is written past the candidates").isEqualTo(-7);
        }
      }
    }
  }

  @Test
  void identicalCandidatesScoreTheSame() {
    Scorer scorer = createScorer();
    int n = 5;
    EndpointState[] endpoints = new EndpointState[n];
    for (int i = 0; i < n; i++) {
      endpoints[i] = endpoint(i);
      endpoints[i].updateMetrics(EndpointMetrics.of(1, 2, 0.3, System.nanoTime()));
    }
    RoutingContext context = context(endpoints, new int[n], new double[] {0.2, 0.2, 0.2, 0.2, 0.2},
        new SplittableRandom(1));
    double[] scores = new double[n];
    scorer.score(context, scores);
    for (int i = 1; i < n; i++) {
      assertThat(scores[i]).isEqualTo(scores[0]);
    }
  }

  @Test
  void endpointsWithoutMetricsAreScored() {
    Scorer scorer = createScorer();
    EndpointState[] endpoints = {endpoint(0), endpoint(1)};
    RoutingContext context = context(endpoints, new int[] {0, 3}, new double[] {0.5, 0.1}, new SplittableRandom(2));
    double[] scores = new double[2];
    scorer.score(context, scores);
    for (double s : scores) {
      assertThat(s).isBetween(0.0, 1.0);
    }
  }

  @Test
  void onRoutedAcceptsAnyCandidate() {
    Scorer scorer = createScorer();
    RoutingContext context = randomContext(4, new SplittableRandom(3));
    for (int i = 0; i < 4; i++) {
      scorer.onRouted(context, i);
    }
    double[] scores = new double[4];
    scorer.score(context, scores);
    for (double s : scores) {
      assertThat(s).isBetween(0.0, 1.0);
    }
  }

  @Test
  void isSafeUnderConcurrentUse() throws Exception {
    Scorer scorer = createScorer();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int seed = t;
        futures.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          for (int i = 0; i < 500; i++) {
            int n = 1 + random.nextInt(16);
            RoutingContext context = randomContext(n, random);
            double[] scores = new double[n];
            scorer.score(context, scores);
            for (double s : scores) {
              assertThat(s).isBetween(0.0, 1.0);
            }
            scorer.onRouted(context, random.nextInt(n));
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** An endpoint for these tests, in slot {@code i}. */
  protected static EndpointState endpoint(int i) {
    return EndpointState.detached(Endpoint.of("e" + i, "http://127.0.0.1:" + (9000 + i), "test-model"), i);
  }

  private static RoutingContext randomContext(int n, SplittableRandom random) {
    long now = System.nanoTime();
    EndpointState[] endpoints = new EndpointState[n];
    int[] matched = new int[n];
    double[] ttft = new double[n];
    for (int i = 0; i < n; i++) {
      endpoints[i] = endpoint(i);
      switch (random.nextInt(4)) {
        case 0 -> { } // never scraped
        case 1 -> endpoints[i].updateMetrics(EndpointMetrics.of(random.nextInt(50), random.nextInt(300),
            random.nextDouble(), now));
        case 2 -> endpoints[i].updateMetrics(EndpointMetrics.of(0, 0, Double.NaN, now - 60_000_000_000L));
        default -> {
          for (int k = random.nextInt(10); k > 0; k--) {
            endpoints[i].onDispatched(random.nextInt(4000));
          }
        }
      }
      matched[i] = random.nextInt(40);
      ttft[i] = random.nextDouble() * 10;
    }
    return context(endpoints, matched, ttft, random);
  }

  private static RoutingContext context(EndpointState[] endpoints, int[] matched, double[] ttft,
      SplittableRandom random) {
    InferenceRequest request = InferenceRequest.builder("test-model").system("You are terse.")
        .user("x ".repeat(400)).sessionId("s-1").build();
    ApproximateTokenizer tokenizer = new ApproximateTokenizer();
    TokenizedPrompt prompt = TokenizedPrompt.of(tokenizer, tokenizer.tokenize(request), request);
    int[] blockSizes = new int[endpoints.length];
    java.util.Arrays.fill(blockSizes, 16);
    return RoutingContext.forTesting(request, prompt, endpoints, matched, blockSizes, ttft, System.nanoTime(),
        random);
  }
}
