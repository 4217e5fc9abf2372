package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.check.Explainer;
import dev.kinference.policy.check.PolicyChecker;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RoutingProfile;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A pool's {@code spec.routing.profile}: bound, validated against each scorer's declaration, checked, explained. */
class RoutingProfileConfigTest {

  private static String pool(String name, String model, String routing) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata:
          name: %s
        spec:
          model: %s
          endpoints:
            - url: http://10.0.0.%d:8000
        %s
        """.formatted(name, model, Math.abs(name.hashCode() % 200) + 1, routing.indent(2).stripTrailing());
  }

  private static final String TUNED = """
      routing:
        profile:
          scorers:
            - {type: prefix-overlap, weight: 3}
            - type: kv-utilization
              weight: 1
              parameters: {knee: 0.7}
            - type: session-affinity
              parameters: {idleExpiry: 5m, maxSessions: 1000}
      """;

  @Test
  void aPoolsProfileIsBoundWithEveryParameterWrittenOut() {
    PolicyConfig c = PolicyLoader.load(pool("small", "qwen", TUNED), "pools.yaml").orThrow();
    RoutingProfile profile = c.routingProfiles().get("qwen");
    assertThat(profile.types()).containsExactly("prefix-overlap", "kv-utilization", "session-affinity");
    assertThat(profile.scorers().get(0).weight()).isEqualTo(3.0);
    assertThat(profile.scorers().get(1).parameters()).isEqualTo(Map.of("knee", 0.7));
    assertThat(profile.scorers().get(2).weight()).isEqualTo(1.0);
    assertThat(profile.scorers().get(2).parameters()).containsExactly(
        Map.entry("idleExpiry", Duration.ofMinutes(5)), Map.entry("maxSessions", 1000L));
    assertThat(c.pool("small").spec().routing().profile()).isEqualTo(profile);
    // a profile without parameters gets each scorer's declared defaults: the default profile's
    PolicyConfig plain = PolicyLoader.load(pool("small", "qwen", """
        routing: {profile: {scorers: [{type: kv-utilization, weight: 0.5}, {type: queue-depth, weight: 0.3}]}}
        """), "pools.yaml").orThrow();
    assertThat(plain.routingProfiles().get("qwen").describe())
        .isEqualTo("kv-utilization 0.5 {knee=0.5}, queue-depth 0.3 {sinceScrapeWeight=0.25}");
    assertThat(PolicyLoader.load(pool("small", "qwen", ""), "pools.yaml").orThrow().routingProfiles()).isEmpty();
  }

  /** Each mistake is an error at its path that says what is allowed. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      {scorers: [{type: kv-utilisation}]}                          | spec.routing.profile.scorers[0].type | unknown scorer type 'kv-utilisation' (did you mean 'kv-utilization'?); known: in-flight, kv-utilization, predicted-ttft
      {scorers: [{type: kv-utilization, parameters: {kne: 0.2}}]} | spec.routing.profile.scorers[0].parameters.kne | unknown parameter 'kne' (did you mean 'knee'?); kv-utilization takes knee
      {scorers: [{type: in-flight, parameters: {knee: 0.2}}]}     | spec.routing.profile.scorers[0].parameters.knee | unknown parameter 'knee'; scorer in-flight takes no parameters
      {scorers: [{type: kv-utilization, parameters: {knee: 1}}]}  | spec.routing.profile.scorers[0].parameters.knee | must be in [0, 1), got 1
      {scorers: [{type: kv-utilization, parameters: {knee: x}}]}  | spec.routing.profile.scorers[0].parameters.knee | expected a number in [0, 1), got string 'x'
      {scorers: [{type: session-affinity, parameters: {idleExpiry: 30}}]}    | spec.routing.profile.scorers[0].parameters.idleExpiry | expected a duration above 0s and at most 604800s, got integer 30
      {scorers: [{type: session-affinity, parameters: {idleExpiry: 8d}}]}    | spec.routing.profile.scorers[0].parameters.idleExpiry | must be above 0s and at most 604800s, got 192h
      {scorers: [{type: session-affinity, parameters: {maxSessions: 1.5}}]}  | spec.routing.profile.scorers[0].parameters.maxSessions | expected an integer in [1, 100000000], got number 1.5
      {scorers: [{type: in-flight, weight: 0}]}                   | spec.routing.profile.scorers[0].weight | must be above 0 (leave the scorer out to not use it)
      {scorers: [{type: in-flight, wieght: 2}]}                   | spec.routing.profile.scorers[0].wieght | unknown field (did you mean 'weight'?)
      {scorers: [{type: in-flight}, {type: in-flight}]}           | spec.routing.profile.scorers[1] | scorer 'in-flight' appears twice in the profile; give each type once
      {scorers: []}                                                | spec.routing.profile.scorers | a profile needs at least one scorer
      {}                                                           | spec.routing.profile.scorers | required field missing
      """)
  void aBadProfileIsAnErrorNamingThePathAndWhatIsAllowed(String profile, String path, String message) {
    LoadResult r = PolicyLoader.load(pool("small", "qwen", "routing: {profile: " + profile + "}"), "pools.yaml");
    assertThat(r.config()).isNull();
    assertThat(r.errors()).as(r.report()).anySatisfy(p -> {
      assertThat(p.path()).isEqualTo(path);
      assertThat(p.message()).startsWith(message.contains("known: in-flight") ? message.substring(0,
          message.indexOf("known:")) : message);
      assertThat(p.line()).isPositive();
    });
  }

  @Test
  void poolsServingOneModelMustAgreeOnTheirProfile() {
    LoadResult r = PolicyLoader.load(pool("a", "qwen", TUNED) + "---\n" + pool("b", "qwen", ""), "pools.yaml");
    assertThat(r.errors()).singleElement().satisfies(p -> assertThat(p.message())
        .contains("pools a", "and b both serve model 'qwen' with different routing profiles"));
    assertThat(PolicyLoader.load(pool("a", "qwen", TUNED) + "---\n" + pool("b", "qwen", TUNED), "pools.yaml")
        .problems()).isEmpty();
  }

  @Test
  void kinferenceCheckCatchesABadProfile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("pools.yaml");
    Files.writeString(file, pool("small", "qwen", """
        routing:
          profile:
            scorers:
              - type: queue-depth
                parameters: {sinceScrapeWeight: 2}
        """));
    StringWriter out = new StringWriter();
    assertThat(PolicyChecker.run(List.of(file), false, new PrintWriter(out))).isEqualTo(PolicyChecker.PROBLEMS);
    assertThat(out.toString()).contains("pools.yaml:13:43: error: spec.routing.profile.scorers[0].parameters"
        + ".sinceScrapeWeight: must be in [0, 1], got 2");
  }

  @Test
  void explainShowsTheProfileTheRequestIsScoredWith() {
    PolicyConfig c = PolicyLoader.load(pool("small", "qwen", TUNED) + "---\n" + pool("other", "llama", ""),
        "pools.yaml").orThrow();
    String tuned = Explainer.explain(c, InferenceRequest.builder("qwen").user("hi").build(), Set.of());
    assertThat(tuned).contains("profile: prefix-overlap 3, kv-utilization 1 {knee=0.7}, session-affinity 1 "
        + "{idleExpiry=5m, maxSessions=1000} (the pool's, for model qwen)");
    String plain = Explainer.explain(c, InferenceRequest.builder("llama").user("hi").build(), Set.of());
    assertThat(plain).contains("profile: predicted-ttft 1, prefix-overlap 1, kv-utilization 0.5 {knee=0.5}, "
        + "new-prefix-headroom 1 {minCacheShare=0.02, maxHeldShare=0.3, ttftSlack=0.1s}, "
        + "session-affinity 1 {idleExpiry=30m, maxSessions=1000000}, queue-depth 0.3 {sinceScrapeWeight=0.25}, "
        + "prefix-under-saturation 4, session-residency 4 {idleExpiry=1m, oversubscription=1, maxSessions=1000000}, "
        + "ttft-overflow 16 {ttftTarget=4s} (the default)");
  }
}
