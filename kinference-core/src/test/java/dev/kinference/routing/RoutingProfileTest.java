package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RoutingProfileTest {

  private static final PluginSet<Scorer> KNOWN = Plugins.load(Scorer.class);
  private static final long NOW = 10_000_000_000L;

  private static Router.Builder builder() {
    return Router.builder().ticker(() -> NOW).random(new SplittableRandom(7)).endpoints(List.of(
        Endpoint.of("a", "http://127.0.0.1:8000", "m"), Endpoint.of("b", "http://127.0.0.1:8001", "m"),
        Endpoint.of("c", "http://127.0.0.1:8002", "m"), Endpoint.of("x", "http://127.0.0.1:8003", "other")));
  }

  /** KV usage 0.3, 0.6 and 0.9 and one, none and two requests waiting: knee and queue weight both show. */
  private static Router loaded(Router router) {
    router.fleet().get("a").updateMetrics(EndpointMetrics.of(1, 2, 0.3, NOW));
    router.fleet().get("b").updateMetrics(EndpointMetrics.of(0, 2, 0.6, NOW));
    router.fleet().get("c").updateMetrics(EndpointMetrics.of(2, 2, 0.9, NOW));
    router.fleet().get("x").updateMetrics(EndpointMetrics.of(0, 0, 0.1, NOW));
    return router;
  }

  private static InferenceRequest request(String model) {
    return InferenceRequest.builder(model).system("you help").user("what is a KV cache?").build();
  }

  @Test
  void theDefaultProfileIsTheProfileBuiltFromTheScorersNamesWithDefaultParameters() {
    for (boolean precise : new boolean[] {false, true}) {
      Router byDefault = loaded(precise ? builder().cacheIndex(new PreciseCacheIndex()).build() : builder().build());
      Router.Builder named = precise ? builder().cacheIndex(new PreciseCacheIndex()) : builder();
      named.scorer("predicted-ttft", 1).scorer("prefix-overlap", 1).scorer("kv-utilization", 0.5)
          .scorer("new-prefix-headroom", 1).scorer("session-affinity", 1).scorer("queue-depth", 0.3).scorer("prefix-under-saturation", 4)
          .scorer("session-residency", 4).scorer("ttft-overflow", 16);
      if (precise) {
        named.scorer("prefix-home", 1);
      }
      Router byName = loaded(named.build());
      Router byValue = loaded((precise ? builder().cacheIndex(new PreciseCacheIndex()) : builder())
          .profile(RoutingProfile.defaults(precise)).build());
      assertThat(byName.profile()).isEqualTo(byDefault.profile()).isEqualTo(byValue.profile())
          .isEqualTo(RoutingProfile.defaults(precise).resolve(KNOWN));
      assertThat(byDefault.profile().scorers().get(2).parameters()).containsEntry("knee", 0.5);
      assertThat(byDefault.profile().scorers().get(5).parameters()).containsEntry("sinceScrapeWeight", 0.25);
      assertThat(byDefault.profile().scorers().get(3).parameters()).containsEntry("ttftSlack", Duration.ofMillis(100));
      assertThat(byName.preview(request("m")).breakdown()).isEqualTo(byDefault.preview(request("m")).breakdown());
    }
  }

  @Test
  void aScorerSelectedByNameGetsTheDefaultProfilesParameters() {
    Router router = loaded(builder().scorer("kv-utilization", 1).build());
    // knee 0.5: a (0.3) scores as well as an empty cache, c (0.9) 1 - 0.4 / 0.5
    Map<String, Double> scores = kvScores(router.preview(request("m")));
    assertThat(scores.get("a")).isEqualTo(1.0);
    assertThat(scores.get("c")).isCloseTo(0.2, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(router.profile().scorers().get(0).parameters()).isEqualTo(new KvUtilizationScorer().parameters()
        .asMap()).containsEntry("knee", 0.5);
  }

  @Test
  void parametersTuneAScorerSelectedByName() {
    Router router = loaded(builder().scorer("kv-utilization", 1, Map.of("knee", 0)).build());
    Map<String, Double> scores = kvScores(router.preview(request("m")));
    assertThat(scores.get("a")).isCloseTo(0.7, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(router.profile().describe()).isEqualTo("kv-utilization 1 {knee=0}");
  }

  @Test
  void aModelWithAProfileOfItsOwnIsScoredWithIt() {
    RoutingProfile own = RoutingProfile.builder().scorer("queue-depth", 2, Map.of("sinceScrapeWeight", 1))
        .scorer("in-flight", 1).build();
    Router router = loaded(builder().profile("other", own).build());
    RoutingDecision d = router.preview(request("other"));
    assertThat(d.breakdown().get(0).scores().keySet()).containsExactly("queue-depth", "in-flight");
    assertThat(router.profile("other")).isEqualTo(own.resolve(KNOWN));
    assertThat(router.profile("m")).isEqualTo(router.profile()).isEqualTo(RoutingProfile.defaults(false)
        .resolve(KNOWN));
    assertThat(router.preview(request("m")).breakdown().get(0).scores().keySet())
        .containsExactlyElementsOf(RoutingProfile.defaults(false).types());
    assertThat(router.profilesByModel()).containsOnlyKeys("other");
    assertThat(router.toString()).contains("profiles by model=[other]");
  }

  @Test
  void aProfileNamesEveryUnknownTypeAndBadParameterWithItsPath() {
    RoutingProfile bad = RoutingProfile.builder().scorer("prefix-overlap", 1).scorer("kv-utilisation", 1)
        .scorer("kv-utilization", 1, Map.of("knee", 1.5, "kne", 0.2)).build();
    assertThat(bad.problems(KNOWN)).containsExactlyInAnyOrder(
        "scorers[1].type: unknown scorer 'kv-utilisation'; known: " + String.join(", ", KNOWN.names()),
        "scorers[2].parameters.knee: must be in [0, 1), got 1.5",
        "scorers[2].parameters.kne: unknown parameter 'kne'; allowed: knee");
    assertThatThrownBy(() -> Router.builder().profile(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("scorers[1].type").hasMessageContaining("scorers[2].parameters.knee");
    assertThatThrownBy(() -> Router.builder().scorer("queue-depth", 1, Map.of("weight", 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage(
            "weight: unknown parameter 'weight'; allowed: sinceScrapeWeight");
    assertThatThrownBy(() -> Router.builder().scorer("in-flight", 1, Map.of("x", 1)))
        .hasMessageContaining("takes no parameters");
    assertThatThrownBy(() -> builder().profile(RoutingProfile.defaults(false)).scorer("in-flight", 1).build())
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> RoutingProfile.builder().scorer("in-flight", 1).scorer("in-flight", 2).build())
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> RoutingProfile.builder().build()).hasMessageContaining("at least one scorer");
    assertThatThrownBy(() -> RoutingProfile.builder().scorer("in-flight", 0)).hasMessageContaining("positive");
  }

  /** Every built-in parameter, and what is accepted and refused for it. */
  @ParameterizedTest(name = "{0}.{1} = {2}")
  @CsvSource(delimiter = '|', textBlock = """
      kv-utilization   | knee              | 0      | ok
      kv-utilization   | knee              | 0.99   | ok
      kv-utilization   | knee              | 1      | must be in [0, 1), got 1
      kv-utilization   | knee              | -0.1   | must be in [0, 1), got -0.1
      queue-depth      | sinceScrapeWeight | 1      | ok
      queue-depth      | sinceScrapeWeight | 0      | ok
      queue-depth      | sinceScrapeWeight | 1.01   | must be in [0, 1], got 1.01
      prefix-home      | minCacheShare     | 1      | ok
      prefix-home      | minCacheShare     | 0      | must be in (0, 1], got 0
      new-prefix-headroom | maxHeldShare   | 1      | ok
      new-prefix-headroom | maxHeldShare   | 0      | must be in (0, 1], got 0
      new-prefix-headroom | ttftSlack      | PT0.1S | ok
      new-prefix-headroom | ttftSlack      | PT0S   | must be above 0s and at most 3600s, got 0s
      session-affinity | maxSessions       | 1      | ok
      session-affinity | maxSessions       | 0      | must be in [1, 100000000], got 0
      session-affinity | maxSessions       | 0.5    | expected an integer, got 0.5
      session-affinity | idleExpiry        | PT1S   | ok
      session-affinity | idleExpiry        | PT0S   | must be above 0s and at most 604800s, got 0s
      session-affinity | idleExpiry        | P8D    | must be above 0s and at most 604800s, got 192h
      session-affinity | idleExpiry        | 30     | expected a duration, got 30
      """)
  void parameterValidation(String type, String key, String value, String expected) {
    Scorer scorer = KNOWN.require(type);
    Object v = value.startsWith("P") ? Duration.parse(value)
        : value.contains(".") ? (Object) Double.parseDouble(value) : (Object) Long.parseLong(value);
    List<Parameters.Problem> problems = Parameters.problems(scorer.declaredParameters(), Map.of(key, v));
    if (expected.equals("ok")) {
      assertThat(problems).isEmpty();
      Scorer made = scorer.create(Parameters.of(scorer.declaredParameters(), Map.of(key, v)), () -> NOW);
      assertThat(made.parameters().asMap().get(key)).isEqualTo(v instanceof Long l
          && scorer.declaredParameters().stream().anyMatch(p -> p.name().equals(key)
              && p.kind() == Parameter.Kind.NUMBER) ? (Object) l.doubleValue() : v);
    } else {
      assertThat(problems).containsExactly(new Parameters.Problem(key, expected));
      assertThatThrownBy(() -> Parameters.of(scorer.declaredParameters(), Map.of(key, v)))
          .isInstanceOf(IllegalArgumentException.class).hasMessage(key + ": " + expected);
    }
  }

  @Property
  void aNumberIsAcceptedExactlyWhenItIsInItsRange(@ForAll double value) {
    Parameter knee = KvUtilizationScorer.KNEE;
    boolean inRange = value >= 0 && value < 1;
    assertThat(Parameters.problems(List.of(knee), Map.of("knee", value))).hasSize(inRange ? 0 : 1);
    if (inRange) {
      assertThat(new KvUtilizationScorer().create(Parameters.of(List.of(knee), Map.of("knee", value)), () -> 0)
          .parameters().number("knee")).isEqualTo(value);
    } else {
      assertThatThrownBy(() -> new KvUtilizationScorer(value)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("knee: ");
    }
  }

  @Property
  void anUndeclaredKeyIsRefusedNamingTheDeclaredOnes(@ForAll String key) {
    List<Parameter> declared = KNOWN.require("session-affinity").declaredParameters();
    List<Parameters.Problem> problems = Parameters.problems(declared, Map.of(key, 1L));
    if (key.equals("maxSessions")) {
      assertThat(problems).isEmpty();
    } else if (key.equals("idleExpiry")) {
      assertThat(problems).singleElement().extracting(Parameters.Problem::message)
          .isEqualTo("expected a duration, got 1");
    } else {
      assertThat(problems).singleElement().extracting(Parameters.Problem::message)
          .isEqualTo("unknown parameter '" + key + "'; allowed: idleExpiry, maxSessions");
    }
  }

  private static Map<String, Double> kvScores(RoutingDecision d) {
    Map<String, Double> out = new java.util.HashMap<>();
    d.breakdown().forEach(c -> out.put(c.endpoint().id(), c.scores().get("kv-utilization")));
    return out;
  }
}
