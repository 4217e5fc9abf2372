package dev.kinference.policy.engine;

import static dev.kinference.policy.engine.Scenario.policy;
import static dev.kinference.policy.engine.Scenario.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * A saturated pool with a cloud fallback sends overflow to the provider, except requests with personal data, which
 * stay local (queued or refused) whatever the rules say.
 */
class PersonalDataLocalityTest {

  private static final String PII = "My card is 4111 1111 1111 1111, mail me at jane.doe@example.com";

  private static Router router(Scenario s) {
    return Router.builder().fleet(s.fleet).policyEngine(s.engine).ticker(() -> Scenario.NOW).random(new Random(3))
        .build();
  }

  private static List<Endpoint> ranked(RoutingDecision d) {
    List<Endpoint> all = new ArrayList<>();
    all.add(d.endpoint());
    all.addAll(d.alternates());
    return all;
  }

  @Test
  void overflowGoesToTheCloudButPersonalDataStaysLocal() {
    Scenario s = Scenario.of("").saturate("small");
    try (Router router = router(s)) {
      RoutingDecision clean = router.preview(request("chat-small").build());
      assertThat(clean.endpoint().id()).isEqualTo("external:cloud/m-mini");
      assertThat(ranked(clean)).extracting(Endpoint::id).contains("s1", "s2");

      RoutingDecision personal = router.preview(request("chat-small").user(PII).build());
      assertThat(ranked(personal)).isNotEmpty().noneMatch(Endpoint::isExternal);
      assertThat(personal.policyTrace()).anyMatch(t -> t.contains("found email, payment-card"));
    }
  }

  @Test
  void personalDataIsRefusedWhenThePolicySaysSoAndTheModelIsOnlyInTheCloud() {
    Scenario s = Scenario.of(policy("p", 0, """
        - name: refuse-when-full
          match: {personalData: true}
          action: {onSaturation: reject, retryAfter: 15s}""")).saturate("small");
    try (Router router = router(s)) {
      try {
        router.route(request("chat-small").user(PII).build());
        throw new AssertionError("not refused");
      } catch (RequestRejectedException e) {
        assertThat(e.httpStatus()).isEqualTo(503);
        assertThat(e.getMessage()).contains("personal data (email, payment-card), which never leaves local pools");
        assertThat(e.retryAfter()).contains(java.time.Duration.ofSeconds(15));
      }
    }
    PolicyVerdict.Reject cloud = s.reject(request("cloud-only").user(PII).build());
    assertThat(cloud.httpStatus()).isEqualTo(403);
    assertThat(cloud.reason()).contains("served here only by an external provider");
  }

  @Test
  void evenARuleThatRoutesToTheCloudCannotSendPersonalDataOut() {
    Scenario s = Scenario.of(policy("p", 0, """
        - name: burst
          action:
            route: {alias: mixed}
            fallback: [{provider: cloud, model: m-big}, {alias: cloud-only}]""")).saturate("small");
    for (int i = 0; i < 50; i++) {
      PolicyVerdict.Proceed p = s.proceed(request("chat").user(PII).build());
      assertThat(p.fallbackEndpointIds()).isEmpty();
      assertThat(s.candidates(p)).containsExactly("s1", "s2");
    }
  }

  // ---- the property ---------------------------------------------------------------------------------------------

  record Case(String model, Set<String> saturated, List<String> rules, String pii, boolean batch) {}

  private static final List<String> RULES = List.of(
      """
      - name: fallback-big
        action: {fallback: [{provider: cloud, model: m-big}]}""",
      """
      - name: fallback-alias
        action: {fallback: [{alias: cloud-only}, {alias: chat-small}]}""",
      """
      - name: to-mixed
        action: {route: {alias: mixed}}""",
      """
      - name: to-cloud
        match: {complexity: [simple, moderate, complex]}
        action: {route: {alias: cloud-only}}""",
      """
      - name: saturated-burst
        match: {pool: {saturated: true}}
        action: {fallback: [{provider: cloud, model: m-mini}]}""",
      """
      - name: refuse-full
        action: {onSaturation: reject}""",
      """
      - name: batch-gate
        match: {trafficClass: batch}
        action: {admitBelow: {queueDepth: 1}}""",
      """
      - name: prio
        action: {setPriority: 3}""");

  private static final List<String> PII_TEXTS = List.of(
      "write to jane.doe@example.com", "call +33 6 12 34 56 78", "card 5555 5555 5555 4444",
      "IBAN GB82 WEST 1234 5698 7654 32", "SSN 078-05-1120", "NIE X1234567L", "AKIAIOSFODNN7EXAMPLE",
      "-----BEGIN PRIVATE KEY-----\nMIIE");

  @Provide
  Arbitrary<Case> cases() {
    return Combinators.combine(
        Arbitraries.of("chat", "chat-small", "mixed", "cloud-only", "small-model"),
        Arbitraries.of("small", "large").set(),
        Arbitraries.of(RULES).list().ofMaxSize(5).uniqueElements(),
        Arbitraries.of(PII_TEXTS),
        Arbitraries.of(true, false)).as(Case::new);
  }

  @Property(tries = 150)
  void personalDataNeverLeavesLocalPools(@ForAll("cases") Case c) {
    String rules = c.rules().isEmpty() ? "" : policy("p", 0, String.join("\n", c.rules()));
    Scenario s = Scenario.of(rules);
    c.saturated().forEach(s::saturate);
    InferenceRequest.Builder b = request(c.model()).user("Question for you. " + c.pii() + " Thanks.");
    if (c.batch()) {
      b.trafficClass(dev.kinference.request.TrafficClass.BATCH);
    }
    InferenceRequest r = b.build();
    PolicyVerdict v = s.eval(r);
    if (v instanceof PolicyVerdict.Proceed p) {
      assertThat(p.fallbackEndpointIds()).as("%s", v.trace()).isEmpty();
      for (EndpointState e : s.fleet.endpoints()) {
        if (e.endpoint().isExternal()) {
          assertThat(p.candidates() != null && p.candidates().test(e)).as("%s %s", e, v.trace()).isFalse();
        }
      }
      try (Router router = router(s)) {
        assertThat(ranked(router.preview(r))).noneMatch(Endpoint::isExternal);
      }
    } else {
      PolicyVerdict.Reject no = (PolicyVerdict.Reject) v;
      assertThat(no.httpStatus()).isIn(403, 429, 503);
    }
  }
}
