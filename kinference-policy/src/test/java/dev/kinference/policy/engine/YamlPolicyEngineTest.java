package dev.kinference.policy.engine;

import static dev.kinference.policy.engine.Scenario.policy;
import static dev.kinference.policy.engine.Scenario.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.TrafficClass;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class YamlPolicyEngineTest {

  private static final String EMAIL_PROMPT = "Please reply to jane.doe@example.com about her order";
  private static final String CODE_PROMPT = """
      Refactor this and explain the trade-offs step by step:
      ```java
      public int f(int x) {
        return x * 2;
      }
      ```""";

  /** A scenario with one policy holding one rule. */
  private static Scenario rule(String ruleYaml) {
    return Scenario.of(policy("p", 0, ruleYaml));
  }

  @Nested
  class BuiltIns {

    @Test
    void aliasResolvesToPoolAndRewritesTheModel() {
      PolicyVerdict.Proceed p = Scenario.of("").proceed(request("chat").build());
      assertThat(p.request().model()).isEqualTo("large-model");
      assertThat(Scenario.of("").candidates(p)).containsExactly("l1", "l2");
      assertThat(p.fallbackEndpointIds()).isEmpty();
      assertThat(p.trace()).contains("builtin/tenant: a", "builtin/model: model chat -> alias chat -> pool large");
    }

    @Test
    void aPoolsServedModelCanBeRequestedDirectly() {
      Scenario s = Scenario.of("");
      PolicyVerdict.Proceed p = s.proceed(request("small-model").build());
      assertThat(p.request().model()).isEqualTo("small-model");
      assertThat(s.candidates(p)).containsExactly("s1", "s2");
    }

    @Test
    void missingTenantIs401UnknownTenant403DisallowedModel403UnknownModel404() {
      Scenario s = Scenario.of("");
      assertThat(s.reject(request("chat").tenant(null).build()).httpStatus()).isEqualTo(401);
      assertThat(s.reject(request("chat").tenant("zz").build()).httpStatus()).isEqualTo(403);
      PolicyVerdict.Reject notAllowed = s.reject(request("mixed").tenant("b").build());
      assertThat(notAllowed.httpStatus()).isEqualTo(403);
      assertThat(notAllowed.reason()).contains("tenant 'b' may not use model 'mixed'", "allowed: chat, chat-small");
      PolicyVerdict.Reject unknown = s.reject(request("gpt-9").build());
      assertThat(unknown.httpStatus()).isEqualTo(404);
      assertThat(unknown.reason()).contains("model 'gpt-9' does not exist", "known models: ");
    }

    @Test
    void aModelTheConfigurationDoesNotKnowButTheFleetServesGoesToTheFleetDefault() {
      PolicyConfig config = Scenario.load("");
      Fleet fleet = Fleet.of(List.of(dev.kinference.endpoint.Endpoint.of("x1", "http://10.9.0.1:8000", "other")));
      YamlPolicyEngine engine = YamlPolicyEngine.builder().config(config).build();
      PolicyVerdict v = engine.evaluate(request("other").build(), fleet.snapshot());
      assertThat(v).isInstanceOf(PolicyVerdict.Proceed.class);
      assertThat(((PolicyVerdict.Proceed) v).candidates()).isNull();
      assertThat(v.trace()).anyMatch(t -> t.contains("not in the configuration"));
    }

    @Test
    void anEmptyConfigurationLetsEveryRequestThroughUnchanged() {
      YamlPolicyEngine engine = YamlPolicyEngine.builder().config(PolicyConfig.EMPTY).build();
      InferenceRequest r = InferenceRequest.builder("anything").user("hi").build();
      PolicyVerdict v = engine.evaluate(r, Fleet.create().snapshot());
      assertThat(v).isInstanceOf(PolicyVerdict.Proceed.class);
      assertThat(((PolicyVerdict.Proceed) v).request()).isSameAs(r);
    }

    @Test
    void aSaturatedPoolWithAFallbackPrefersTheFallback() {
      Scenario s = Scenario.of("").saturate("small");
      PolicyVerdict.Proceed p = s.proceed(request("chat-small").build());
      assertThat(p.preferFallbacks()).isTrue();
      assertThat(p.fallbackEndpointIds()).containsExactly("external:cloud/m-mini");
      assertThat(p.trace()).anyMatch(t -> t.startsWith("builtin/overflow: pool small is saturated"));
    }

    @Test
    void anIdlePoolKeepsItsFallbacksForRetriesOnly() {
      PolicyVerdict.Proceed p = Scenario.of("").proceed(request("chat-small").build());
      assertThat(p.preferFallbacks()).isFalse();
      assertThat(p.fallbackEndpointIds()).containsExactly("external:cloud/m-mini");
    }

    @Test
    void weightedTargetsAreStickyPerSession() {
      Scenario s = Scenario.of("");
      Set<String> models = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        models.add(s.proceed(request("mixed").build()).request().model());
      }
      assertThat(models).containsExactlyInAnyOrder("small-model", "m-big");
      for (int session = 0; session < 20; session++) {
        InferenceRequest r = request("mixed").sessionId("session-" + session).build();
        String first = s.proceed(r).request().model();
        for (int i = 0; i < 10; i++) {
          assertThat(s.proceed(r).request().model()).isEqualTo(first);
        }
      }
    }

    @Test
    void anExternalTargetIsTheOnlyCandidate() {
      Scenario s = Scenario.of("");
      PolicyVerdict.Proceed p = s.proceed(request("cloud-only").build());
      assertThat(p.request().model()).isEqualTo("m-big");
      assertThat(s.candidates(p)).containsExactly("external:cloud/m-big");
    }
  }

  @Nested
  class Matches {

    @Test
    void tenants() {
      Scenario s = rule("""
          - name: only-b
            match: {tenants: [b]}
            action: {setPriority: 7}""");
      assertThat(s.proceed(request("chat").tenant("b").build()).request().priority()).isEqualTo(7);
      assertThat(s.proceed(request("chat").tenant("a").build()).request().priority()).isZero();
    }

    @Test
    void modelsWithWildcards() {
      Scenario s = rule("""
          - name: chats
            match: {models: ["chat*"]}
            action: {setPriority: 3}""");
      assertThat(s.proceed(request("chat-small").build()).request().priority()).isEqualTo(3);
      assertThat(s.proceed(request("chat").build()).request().priority()).isEqualTo(3);
      assertThat(s.proceed(request("mixed").sessionId("x").build()).request().priority()).isZero();
    }

    @Test
    void promptTokensAndMaxTokens() {
      Scenario s = rule("""
          - name: big-prompts
            match: {promptTokens: {min: 1000}}
            action: {setPriority: 1}
          - name: big-outputs
            match: {maxTokens: {min: 4096}}
            action: {rewriteModel: long-output}""");
      InferenceRequest small = request("chat").maxTokens(100).build();
      InferenceRequest longPrompt = request("chat").user("word ".repeat(3000)).build();
      InferenceRequest noMax = request("chat").build();
      InferenceRequest bigMax = request("chat").maxTokens(8000).build();
      assertThat(s.proceed(small).request().priority()).isZero();
      assertThat(s.proceed(longPrompt).request().priority()).isEqualTo(1);
      assertThat(s.proceed(noMax).request().model()).as("no max_tokens is -1").isEqualTo("large-model");
      assertThat(s.proceed(bigMax).request().model()).isEqualTo("long-output");
    }

    @Test
    void priorityAndTrafficClass() {
      Scenario s = rule("""
          - name: urgent
            match: {priority: {min: 5}}
            action: {route: {pool: small}}
          - name: batch
            match: {trafficClass: batch}
            action: {setPriority: -5}""");
      assertThat(s.proceed(request("chat").priority(9).build()).request().model()).isEqualTo("small-model");
      assertThat(s.proceed(request("chat").priority(1).build()).request().model()).isEqualTo("large-model");
      assertThat(s.proceed(request("chat").trafficClass(TrafficClass.BATCH).build()).request().priority())
          .isEqualTo(-5);
    }

    @Test
    void personalDataAndItsKinds() {
      Scenario s = rule("""
          - name: cards
            match: {personalDataKinds: [payment-card]}
            action: {reject: {status: 422, message: no cards}}
          - name: any-personal
            match: {personalData: true}
            action: {setPriority: 2}
          - name: clean
            match: {personalData: false}
            action: {setPriority: 1}""");
      assertThat(s.reject(request("chat").user("card 4111 1111 1111 1111").build()).httpStatus()).isEqualTo(422);
      assertThat(s.proceed(request("chat").user(EMAIL_PROMPT).build()).request().priority()).isEqualTo(2);
      assertThat(s.proceed(request("chat").build()).request().priority()).isEqualTo(1);
    }

    @Test
    void complexityAndTopics() {
      Scenario s = rule("""
          - name: simple-to-small
            match: {models: [chat], complexity: [simple]}
            action: {route: {alias: chat-small}}
          - name: code
            match: {topics: [code]}
            action: {setPriority: 4}""");
      PolicyVerdict.Proceed simple = s.proceed(request("chat").build());
      assertThat(simple.request().model()).isEqualTo("small-model");
      PolicyVerdict.Proceed code = s.proceed(request("chat").user(CODE_PROMPT).build());
      assertThat(code.request().model()).isEqualTo("large-model");
      assertThat(code.request().priority()).isEqualTo(4);
    }

    @Test
    void poolStateOfTheCurrentTarget() {
      String rules = """
          - name: burst
            match: {pool: {saturated: true}}
            action: {fallback: [{provider: cloud, model: m-big}]}""";
      PolicyVerdict.Proceed idle = rule(rules).proceed(request("chat").build());
      assertThat(idle.fallbackEndpointIds()).isEmpty();
      PolicyVerdict.Proceed busy = rule(rules).saturate("large").proceed(request("chat").build());
      assertThat(busy.fallbackEndpointIds()).containsExactly("external:cloud/m-big");
      assertThat(busy.preferFallbacks()).isTrue();
    }

    @Test
    void poolStateOfANamedPoolQueueKvAndTtft() {
      Scenario s = rule("""
          - name: small-queue
            match: {pool: {name: small, queueDepth: {min: 3}}}
            action: {setPriority: 1}
          - name: small-kv
            match: {pool: {name: small, kvUtilization: {min: 0.5}}}
            action: {rewriteModel: kv-high}
          - name: large-ttft
            match: {pool: {name: large, predictedTtftMs: {max: 5000}}}
            action: {fallback: [{provider: cloud, model: m-mini}]}""");
      // the pool's state is its least loaded member's: one busy member is not enough
      s.load("s1", 10, 0.9);
      PolicyVerdict.Proceed one = s.proceed(request("chat").build());
      assertThat(one.request().priority()).isZero();
      assertThat(one.request().model()).isEqualTo("large-model");
      assertThat(one.fallbackEndpointIds()).containsExactly("external:cloud/m-mini");
      s.load("s2", 4, 0.6);
      PolicyVerdict.Proceed both = s.proceed(request("chat").build());
      assertThat(both.request().priority()).isEqualTo(1);
      assertThat(both.request().model()).isEqualTo("kv-high");
    }

    @Test
    void aPoolConditionOnAnExternalTargetNeverMatches() {
      Scenario s = rule("""
          - name: saturated
            match: {pool: {saturated: false}}
            action: {setPriority: 9}""");
      assertThat(s.proceed(request("cloud-only").build()).request().priority()).isZero();
      assertThat(s.proceed(request("chat").build()).request().priority()).isEqualTo(9);
    }
  }

  @Nested
  class Actions {

    @Test
    void routeToAnAliasOrAPool() {
      Scenario s = rule("""
          - name: to-alias
            match: {tenants: [a]}
            action: {route: {alias: chat-small}}
          - name: to-pool
            match: {tenants: [b]}
            action: {route: {pool: small}}""");
      PolicyVerdict.Proceed viaAlias = s.proceed(request("chat").build());
      assertThat(viaAlias.request().model()).isEqualTo("small-model");
      assertThat(viaAlias.fallbackEndpointIds()).as("the alias's fallback comes along")
          .containsExactly("external:cloud/m-mini");
      PolicyVerdict.Proceed viaPool = s.proceed(request("chat").tenant("b").build());
      assertThat(s.candidates(viaPool)).containsExactly("s1", "s2");
      assertThat(viaPool.fallbackEndpointIds()).isEmpty();
    }

    @Test
    void rewriteModelChangesOnlyTheServedName() {
      Scenario s = rule("""
          - name: lora
            action: {rewriteModel: large-model-lora-finance}""");
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.request().model()).isEqualTo("large-model-lora-finance");
      assertThat(p.candidates()).isNotNull();
      assertThat(s.candidates(p)).containsExactly("l1", "l2");
    }

    @Test
    void rejectWithStatusMessageAndRetryAfter() {
      Scenario s = rule("""
          - name: maintenance
            match: {models: [chat]}
            action:
              reject: {status: 503, message: "chat is down for maintenance"}
              retryAfter: 2m""");
      PolicyVerdict.Reject r = s.reject(request("chat").build());
      assertThat(r.httpStatus()).isEqualTo(503);
      assertThat(r.reason()).isEqualTo("chat is down for maintenance");
      assertThat(r.retryAfter()).isEqualTo(Duration.ofMinutes(2));
      assertThat(r.trace()).last().isEqualTo("p/maintenance: reject: 503 chat is down for maintenance");
    }

    @Test
    void fallbackChainExpandsAliasesInOrder() {
      Scenario s = rule("""
          - name: chain
            action:
              fallback:
                - {provider: cloud, model: m-big}
                - {alias: chat-small}""");
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.fallbackEndpointIds())
          .containsExactly("external:cloud/m-big", "s1", "s2", "external:cloud/m-mini");
    }

    @Test
    void requireLocalDropsFallbacksAndPicksALocalTarget() {
      Scenario s = rule("""
          - name: local
            match: {tenants: [a]}
            action: {requireLocal: true}""");
      PolicyVerdict.Proceed small = s.proceed(request("chat-small").build());
      assertThat(small.fallbackEndpointIds()).isEmpty();
      for (int i = 0; i < 50; i++) {
        assertThat(s.proceed(request("mixed").build()).request().model()).isEqualTo("small-model");
      }
      PolicyVerdict.Reject cloud = s.reject(request("cloud-only").build());
      assertThat(cloud.httpStatus()).isEqualTo(403);
      assertThat(cloud.reason()).contains("served here only by an external provider", "requires local hardware");
    }

    @Test
    void onSaturationRejectRefusesLocalOnlyRequestsWhenThePoolIsFull() {
      Scenario s = rule("""
          - name: local
            action: {requireLocal: true, onSaturation: reject, retryAfter: 7s}""").saturate("small");
      PolicyVerdict.Reject r = s.reject(request("chat-small").build());
      assertThat(r.httpStatus()).isEqualTo(503);
      assertThat(r.retryAfter()).isEqualTo(Duration.ofSeconds(7));
      assertThat(r.reason()).contains("pool small is saturated", "requires local hardware");
    }

    @Test
    void onSaturationQueueSendsLocalOnlyRequestsToTheFullPool() {
      Scenario s = rule("""
          - name: local
            action: {requireLocal: true, onSaturation: queue}""").saturate("small");
      PolicyVerdict.Proceed p = s.proceed(request("chat-small").build());
      assertThat(p.preferFallbacks()).isFalse();
      assertThat(p.fallbackEndpointIds()).isEmpty();
      assertThat(s.candidates(p)).containsExactly("s1", "s2");
      assertThat(p.trace()).anyMatch(t -> t.contains("queued locally because rule p/local requires local hardware"));
    }

    @Test
    void admitBelowRestrictsCandidatesToIdleMembersAndRefusesWhenNoneIs() {
      Scenario s = rule("""
          - name: batch
            match: {trafficClass: batch}
            action:
              admitBelow: {queueDepth: 2, kvUtilization: 0.7}
              retryAfter: 45s""");
      InferenceRequest batch = request("chat").trafficClass(TrafficClass.BATCH).build();
      s.load("l1", 5, 0.2);
      PolicyVerdict.Proceed p = s.proceed(batch);
      assertThat(s.candidates(p)).containsExactly("l2");
      s.load("l2", 0, 0.8);
      PolicyVerdict.Reject r = s.reject(batch);
      assertThat(r.httpStatus()).isEqualTo(429);
      assertThat(r.retryAfter()).isEqualTo(Duration.ofSeconds(45));
      assertThat(r.reason()).contains("below its load threshold", "queue depth < 2", "KV utilisation < 70%");
      assertThat(s.proceed(request("chat").build())).as("interactive traffic is not gated").isNotNull();
    }

    @Test
    void admitBelowOnPredictedTtft() {
      Scenario s = rule("""
          - name: batch
            action: {admitBelow: {predictedTtftMs: 1}}""");
      PolicyVerdict.Reject r = s.reject(request("chat").build());
      assertThat(r.httpStatus()).isEqualTo(429);
      assertThat(r.retryAfter()).isEqualTo(Evaluation.DEFAULT_ADMISSION_RETRY);
    }

    @Test
    void setPriority() {
      Scenario s = rule("""
          - name: vip
            action: {setPriority: 100}""");
      assertThat(s.proceed(request("chat").priority(1).build()).request().priority()).isEqualTo(100);
    }

    @Test
    void stopEndsEvaluation() {
      Scenario s = rule("""
          - name: first
            match: {tenants: [a]}
            action: {setPriority: 1}
            stop: true
          - name: second
            action: {rewriteModel: never}""");
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.request().model()).isEqualTo("large-model");
      assertThat(p.trace()).contains("p/first: stop").noneMatch(t -> t.startsWith("p/second"));
      assertThat(s.proceed(request("chat").tenant("b").build()).request().model()).isEqualTo("never");
    }
  }

  @Nested
  class EvaluationOrder {

    @Test
    void policiesRunByOrderThenNameAndRulesInOrder() {
      String low = policy("zeta", -1, """
          - name: z1
            action: {setPriority: 1}""");
      String mid1 = policy("alpha", 0, """
          - name: a1
            action: {rewriteModel: from-alpha}""");
      String mid2 = policy("beta", 0, """
          - name: b1
            action: {rewriteModel: from-beta, setPriority: 2}""");
      Scenario s = Scenario.of(mid2 + "---\n" + low + "---\n" + mid1);
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.request().priority()).as("zeta (order -1) sets it first").isEqualTo(1);
      assertThat(p.request().model()).as("alpha before beta at equal order").isEqualTo("from-alpha");
      assertThat(p.trace()).containsSubsequence("zeta/z1: setPriority 1", "alpha/a1: rewriteModel from-alpha",
          "beta/b1: no effect [ignored: rewriteModel (set by alpha/a1); setPriority (set by zeta/z1)]");
    }

    @Test
    void theFirstRuleToSetADecisionWinsAndLaterOnesAreTraced() {
      Scenario s = rule("""
          - name: one
            action: {route: {pool: small}}
          - name: two
            action: {route: {pool: large}, setPriority: 3}""");
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.request().model()).isEqualTo("small-model");
      assertThat(p.request().priority()).isEqualTo(3);
      assertThat(p.trace()).contains("p/one: route pool small",
          "p/two: setPriority 3 [ignored: route (set by p/one)]");
    }

    @Test
    void aRejectEndsEvaluationEvenAfterOtherRulesActed() {
      Scenario s = rule("""
          - name: prio
            action: {setPriority: 3}
          - name: block
            match: {tenants: [a]}
            action: {reject: {message: blocked}}
          - name: after
            action: {setPriority: 5}""");
      PolicyVerdict.Reject r = s.reject(request("chat").build());
      assertThat(r.httpStatus()).isEqualTo(403);
      assertThat(r.trace()).containsExactly("builtin/tenant: a", "builtin/model: model chat -> alias chat -> pool large",
          "p/prio: setPriority 3", "p/block: reject: 403 blocked");
    }

    @Test
    void requireLocalIsMonotonicAndOverridesAnEarlierFallback() {
      Scenario s = rule("""
          - name: fb
            action: {fallback: [{provider: cloud, model: m-big}]}
          - name: local
            match: {tenants: [a]}
            action: {requireLocal: true}""").saturate("large");
      PolicyVerdict.Proceed p = s.proceed(request("chat").build());
      assertThat(p.fallbackEndpointIds()).isEmpty();
      assertThat(p.preferFallbacks()).isFalse();
      assertThat(p.trace()).anyMatch(t -> t.startsWith("builtin/local-only: fallbacks dropped"));
    }

    @Test
    void poolConditionsSeeTheTargetChosenByEarlierRules() {
      Scenario s = rule("""
          - name: to-small
            action: {route: {pool: small}}
          - name: small-busy
            match: {pool: {saturated: true}}
            action: {setPriority: 8}""").saturate("small");
      assertThat(s.proceed(request("chat").build()).request().priority()).isEqualTo(8);
    }
  }

  @Test
  void everyVerdictCarriesATraceAndHeadersAreIrrelevantToTheEngine() {
    Scenario s = Scenario.of("");
    PolicyVerdict v = s.eval(request("chat").headers(Map.of("x-team", "b")).build());
    assertThat(v.trace()).isNotEmpty();
  }
}
