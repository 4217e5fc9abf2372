package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.TrafficClass;
import java.net.http.HttpResponse;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Priority and traffic class come from the tenant: the {@code x-kinference-priority} and
 * {@code x-kinference-traffic-class} headers (and a body's {@code priority}) only choose within the tenant's
 * {@code traffic}, clamped and counted; policy rules are not clamped. The policy engine sees each request as the
 * gateway admitted it, and its verdict as the rules left it.
 */
class TrafficPolicyTest {

  static final String KEY_PRIO = "key-prio";
  static final String KEY_JOBS = "key-jobs";
  static final String KEY_OPS = "key-ops";
  static final AtomicReference<@Nullable InferenceRequest> seen = new AtomicReference<>();
  static final AtomicReference<@Nullable InferenceRequest> decided = new AtomicReference<>();
  static Governance governance;
  static Harness h;

  static String config() {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: prio}
        spec:
          apiKeys: [{sha256: %s}]
          models: ["*"]
          traffic: {maxPriority: 5}
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: jobs}
        spec:
          apiKeys: [{sha256: %s}]
          models: ["*"]
          traffic:
            defaultClass: batch
            allowedClasses: [batch]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: ops}
        spec:
          apiKeys: [{sha256: %s}]
          models: ["*"]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: default}
        spec:
          rules:
            - name: ops-first
              match: {tenants: [ops]}
              action: {setPriority: 100}
        """.formatted(Governance.sha256Hex(KEY_PRIO), Governance.sha256Hex(KEY_JOBS), Governance.sha256Hex(KEY_OPS));
  }

  /** The governance's engine, remembering the last request it evaluated and the request its verdict proceeds with. */
  static PolicyEngine recording(PolicyEngine engine) {
    return new PolicyEngine() {
      @Override
      public String name() {
        return "recording";
      }

      @Override
      public PolicyVerdict evaluate(InferenceRequest request, Fleet.Snapshot fleet) {
        seen.set(request);
        PolicyVerdict v = engine.evaluate(request, fleet);
        decided.set(v instanceof PolicyVerdict.Proceed p ? p.request() : null);
        return v;
      }
    };
  }

  @BeforeAll
  static void start() {
    governance = Governance.of(PolicyLoader.load(config(), "traffic.yaml").orThrow());
    h = Harness.builder().servers(1).router(r -> r.policyEngine(recording(governance.engine())))
        .gateway(g -> g.guard(GovernanceGuard.of(governance))).start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static InferenceRequest send(String key, String body, String... headers) throws Exception {
    seen.set(null);
    String[] all = new String[headers.length + 2];
    all[0] = "Authorization";
    all[1] = "Bearer " + key;
    System.arraycopy(headers, 0, all, 2, headers.length);
    HttpResponse<String> r = h.post("/v1/chat/completions", body, all);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return Objects.requireNonNull(seen.get());
  }

  static String chat() {
    return chat("");
  }

  static String chat(String extra) {
    return "{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":4," + extra
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hi.\"}]}";
  }

  @Test
  void aPriorityAboveTheTenantsMaxPriorityIsServedAtItsMaxPriority() throws Exception {
    InferenceRequest r = send(KEY_PRIO, chat(), "x-kinference-priority", "2147483647");
    assertThat(r.priority()).isEqualTo(5);
    assertThat(r.trafficClass()).isEqualTo(TrafficClass.INTERACTIVE);
    assertThat(send(KEY_PRIO, chat(), "x-kinference-priority", " 3 ").priority()).isEqualTo(3);
    assertThat(send(KEY_PRIO, chat(), "x-kinference-priority", "-2147483648").priority())
        .isEqualTo(Tenant.Traffic.MIN_PRIORITY);
    assertThat(send(KEY_PRIO, chat()).priority()).as("without the header: the tenant's priority").isZero();
    assertThat(send(KEY_PRIO, chat("\"priority\":-99,")).priority())
        .as("the body's priority too (vLLM's: lower first, so -99 asks for 99)").isEqualTo(5);
    assertThat(send(KEY_PRIO, chat("\"priority\":-99,"), "x-kinference-priority", "4").priority())
        .as("the header wins over the body").isEqualTo(4);
    assertThat(h.metric("kinference_gateway_header_clamped_total{tenant=\"prio\",header=\"x-kinference-priority\"}"))
        .isEqualTo(2);
    assertThat(h.metric("kinference_gateway_header_clamped_total{tenant=\"prio\",header=\"priority\"}")).isEqualTo(1);
  }

  @Test
  void aBatchTenantsRequestWithoutTheClassHeaderIsBatchAndCannotAskForInteractive() throws Exception {
    InferenceRequest r = send(KEY_JOBS, chat());
    assertThat(r.trafficClass()).isEqualTo(TrafficClass.BATCH);
    assertThat(r.priority()).isZero();
    assertThat(send(KEY_JOBS, chat(), "x-kinference-traffic-class", "interactive").trafficClass())
        .isEqualTo(TrafficClass.BATCH);
    assertThat(send(KEY_JOBS, chat(), "x-kinference-traffic-class", "Batch").trafficClass())
        .isEqualTo(TrafficClass.BATCH);
    assertThat(send(KEY_JOBS, chat(), "x-kinference-priority", "1").priority()).isZero();
    assertThat(h.metric(
        "kinference_gateway_header_clamped_total{tenant=\"jobs\",header=\"x-kinference-traffic-class\"}"))
        .isEqualTo(1);
    assertThat(h.metric("kinference_gateway_header_clamped_total{tenant=\"jobs\",header=\"x-kinference-priority\"}"))
        .isEqualTo(1);
  }

  @Test
  void anInteractiveTenantMayAskForBatch() throws Exception {
    InferenceRequest r = send(KEY_OPS, chat(), "x-kinference-traffic-class", "batch");
    assertThat(r.trafficClass()).isEqualTo(TrafficClass.BATCH);
    assertThat(send(KEY_OPS, chat()).trafficClass()).isEqualTo(TrafficClass.INTERACTIVE);
  }

  @Test
  void policyRulesSetPrioritiesAboveTheTenantsMaxPriority() throws Exception {
    InferenceRequest r = send(KEY_OPS, chat(), "x-kinference-priority", "50");
    assertThat(r.priority()).as("the header, clamped").isZero();
    assertThat(Objects.requireNonNull(decided.get()).priority()).as("the rule, not clamped").isEqualTo(100);
  }

  @Test
  void malformedHeadersAreStillRefused() throws Exception {
    HttpResponse<String> p = h.post("/v1/chat/completions", chat(), "Authorization", "Bearer " + KEY_PRIO,
        "x-kinference-priority", "high");
    assertThat(p.statusCode()).isEqualTo(400);
    assertThat(p.body()).contains("x-kinference-priority must be an integer");
    HttpResponse<String> c = h.post("/v1/chat/completions", chat(), "Authorization", "Bearer " + KEY_JOBS,
        "x-kinference-traffic-class", "urgent");
    assertThat(c.statusCode()).isEqualTo(400);
    assertThat(c.body()).contains("x-kinference-traffic-class must be interactive or batch");
  }

  @Test
  void anAnonymousOrUnknownCallerGetsTheDefaultTrafficPolicy() {
    assertThat(RequestGuard.OPEN.traffic(CallerIdentity.ANONYMOUS)).isEqualTo(Tenant.Traffic.DEFAULT);
    GovernanceGuard guard = GovernanceGuard.of(governance);
    assertThat(guard.traffic(CallerIdentity.ANONYMOUS)).isEqualTo(Tenant.Traffic.DEFAULT);
    assertThat(guard.traffic(CallerIdentity.of("gone"))).isEqualTo(Tenant.Traffic.DEFAULT);
    assertThat(guard.traffic(CallerIdentity.of("jobs")).defaultClass()).isEqualTo(TrafficClass.BATCH);
  }
}
