package dev.kinference.policy.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.TrafficClass;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Usage;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The rule evaluator fuzzed: arbitrary rules (as YAML that passes validation), arbitrary requests and arbitrary
 * fleet states. Evaluation must always return a verdict with a trace; reservations must succeed or refuse with a
 * status, never fail otherwise.
 */
class EngineFuzzTest {

  private static final List<String> MATCHES = List.of("{}", "{tenants: [a]}", "{tenants: [b, a]}",
      "{models: [chat]}", "{models: ['*small*', mixed]}", "{promptTokens: {min: 20}}", "{promptTokens: {max: 5}}",
      "{maxTokens: {min: 100, max: 1000}}", "{priority: {min: 1}}", "{trafficClass: batch}",
      "{personalData: true}", "{personalData: false}", "{personalDataKinds: [iban, secret]}",
      "{complexity: [simple]}", "{complexity: [complex, moderate]}", "{topics: [code]}",
      "{pool: {saturated: true}}", "{pool: {name: small, queueDepth: {min: 3}}}",
      "{pool: {name: large, kvUtilization: {max: 0.5}, predictedTtftMs: {min: 1}}}");
  private static final List<String> ACTIONS = List.of("{route: {alias: chat-small}}", "{route: {alias: mixed}}",
      "{route: {alias: cloud-only}}", "{route: {pool: large}}", "{rewriteModel: x-lora}",
      "{reject: {status: 418, message: teapot}, retryAfter: 1s}", "{fallback: [{provider: cloud, model: m-mini}]}",
      "{fallback: [{alias: chat-small}, {alias: cloud-only}]}", "{requireLocal: true}",
      "{requireLocal: true, onSaturation: reject}", "{onSaturation: queue}",
      "{admitBelow: {queueDepth: 2, kvUtilization: 0.5}, retryAfter: 3s}", "{admitBelow: {predictedTtftMs: 200}}",
      "{setPriority: -3}", "{setPriority: 9, rewriteModel: y}");

  record Rule(String match, String action, boolean stop) {}

  record Fuzz(List<Rule> rules, String model, String tenant, String text, int maxTokens, int priority,
      boolean batch, String session, List<int[]> loads) {}

  @Provide
  Arbitrary<Fuzz> cases() {
    Arbitrary<Rule> rule = Combinators.combine(Arbitraries.of(MATCHES), Arbitraries.of(ACTIONS),
        Arbitraries.of(false, false, false, true)).as(Rule::new);
    Arbitrary<String> text = Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(300),
        Arbitraries.of("hi", "Explain step by step why ```code``` fails", "mail jane@example.com",
            "IBAN GB82WEST12345698765432", "word ".repeat(500), "AKIAIOSFODNN7EXAMPLE", ""));
    Arbitrary<int[]> load = Combinators.combine(Arbitraries.integers().between(-1, 60),
        Arbitraries.integers().between(-1, 100), Arbitraries.integers().between(0, 3),
        Arbitraries.integers().between(0, 2)).as((w, kv, health, age) -> new int[] {w, kv, health, age});
    return Combinators.combine(
        rule.list().ofMaxSize(6),
        Arbitraries.of("chat", "chat-small", "mixed", "cloud-only", "small-model", "large-model", "nope", "*"),
        Arbitraries.of("a", "b", "zz"),
        text,
        Combinators.combine(Arbitraries.of(-1, 1, 50, 5000, 100_000), Arbitraries.integers().between(-5, 10))
            .as((max, prio) -> new int[] {max, prio}),
        Arbitraries.of(true, false),
        Arbitraries.of("", "s1", "s2"),
        load.list().ofSize(4)).as((rules, model, tenant, t, mp, batch, session, loads) ->
            new Fuzz(rules, model, tenant, t, mp[0], mp[1], batch, session, loads));
  }

  @Property(tries = 250)
  void everyRequestGetsAVerdictWithATrace(@ForAll("cases") Fuzz f) {
    StringBuilder rules = new StringBuilder();
    for (int i = 0; i < f.rules().size(); i++) {
      Rule r = f.rules().get(i);
      rules.append("- name: r").append(i).append("\n  match: ").append(r.match()).append("\n  action: ")
          .append(r.action()).append(r.stop() ? "\n  stop: true" : "").append('\n');
    }
    String extra = f.rules().isEmpty() ? "" : Scenario.policy("fuzz", 0, rules.toString());
    // reject never shares an action; the rule sets the checker refuses (issue 21: personal data or requireLocal
    // routed to an alias with only external targets, whose every request would be refused) are not evaluated
    if (dev.kinference.policy.config.PolicyLoader.load(Scenario.BASE + (extra.isBlank() ? "" : "---\n" + extra),
        "scenario.yaml").hasErrors()) {
      return;
    }
    Scenario s = Scenario.of(extra);
    List<EndpointState> local = new ArrayList<>();
    for (EndpointState e : s.fleet.endpoints()) {
      if (!e.endpoint().isExternal()) {
        local.add(e);
      }
    }
    for (int i = 0; i < local.size(); i++) {
      int[] l = f.loads().get(i % f.loads().size());
      EndpointState e = local.get(i);
      if (l[0] >= 0) {
        double kv = l[1] < 0 ? Double.NaN : l[1] / 100.0;
        long at = Scenario.NOW - l[3] * 150_000_000L;
        e.updateMetrics(EndpointMetrics.of(l[0], l[0] / 2, kv, at));
      }
      e.updateHealth(l[2] == 3 ? Health.UNHEALTHY : Health.HEALTHY, "fuzz");
    }
    InferenceRequest.Builder b = InferenceRequest.builder(f.model()).user(f.text()).tenant(f.tenant())
        .priority(f.priority()).trafficClass(f.batch() ? TrafficClass.BATCH : TrafficClass.INTERACTIVE)
        .sessionId(f.session().isEmpty() ? null : f.session());
    if (f.maxTokens() > 0) {
      b.maxTokens(f.maxTokens());
    }
    InferenceRequest request = b.build();

    PolicyVerdict v = s.eval(request);
    assertThat(v.trace()).isNotEmpty();
    switch (v) {
      case PolicyVerdict.Reject r -> {
        assertThat(r.httpStatus()).isBetween(400, 599).isNotEqualTo(500);
        assertThat(r.reason()).isNotBlank();
      }
      case PolicyVerdict.Proceed p -> {
        assertThat(p.request().model()).isNotBlank();
        assertThat(p.fallbackEndpointIds()).doesNotHaveDuplicates();
      }
    }
    YamlPolicyEngine.Explanation e = s.engine.explain(request, s.fleet.snapshot());
    assertThat(e.personalData()).isNotNull();
    assertThat(e.promptClass()).isNotNull();

    Governance gov = Governance.builder().engine(s.engine).build();
    try {
      Admission a = gov.reserve(request);
      a.settle(new Usage(new Random(f.hashCode()).nextInt(100), 0, 5));
    } catch (RequestRejectedException no) {
      assertThat(no.httpStatus()).isBetween(400, 599);
    }
  }
}
