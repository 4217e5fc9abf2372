package dev.kinference.policy.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.request.InferenceRequest;
import java.util.Random;

/** A configuration, a fleet over its endpoints with controllable load, and an engine; for tests. */
final class Scenario {

  static final long NOW = 5_000_000_000_000L;

  static final String BASE = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: small}
      spec:
        model: small-model
        endpoints:
          - {id: s1, url: "http://10.0.0.1:8000"}
          - {id: s2, url: "http://10.0.0.2:8000"}
        price: {input: 0.1, output: 0.2}
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: large}
      spec:
        model: large-model
        endpoints:
          - {id: l1, url: "http://10.0.1.1:8000"}
          - {id: l2, url: "http://10.0.1.2:8000"}
        price: {input: 1, output: 4}
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ExternalProvider
      metadata: {name: cloud}
      spec:
        api: openai
        baseUrl: https://api.example.com/v1
        apiKey: {env: CLOUD_API_KEY}
        models:
          - {name: m-mini, price: {input: 0.5, output: 2}}
          - {name: m-big, price: {input: 5, output: 20}}
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: chat}
      spec:
        targets: [{pool: large}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: chat-small}
      spec:
        targets: [{pool: small}]
        fallback: [{provider: cloud, model: m-mini}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: mixed}
      spec:
        targets:
          - {pool: small, weight: 1}
          - {provider: cloud, model: m-big, weight: 1}
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: cloud-only}
      spec:
        targets: [{provider: cloud, model: m-big}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: Tenant
      metadata: {name: a}
      spec:
        apiKeys: [{sha256: %s, name: a-key}]
        models: ["*"]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: Tenant
      metadata: {name: b}
      spec:
        header: {name: x-team, value: b}
        models: [chat, chat-small]
      """.formatted(Governance.sha256Hex("key-a"));

  final PolicyConfig config;
  final Fleet fleet;
  final YamlPolicyEngine engine;

  private Scenario(PolicyConfig config, long seed) {
    this.config = config;
    this.fleet = Fleet.of(config.endpoints());
    this.engine = YamlPolicyEngine.builder().config(config).ticker(() -> NOW).random(new Random(seed)).build();
    for (EndpointState s : fleet.endpoints()) {
      if (!s.endpoint().isExternal()) {
        idle(s);
      }
    }
  }

  /** The base resources plus {@code extra} (more documents, such as an InferencePolicy). */
  static Scenario of(String extra) {
    return new Scenario(load(extra), 42);
  }

  static PolicyConfig load(String extra) {
    LoadResult r = PolicyLoader.load(BASE + (extra.isBlank() ? "" : "---\n" + extra), "scenario.yaml");
    assertThat(r.problems()).as(r.report()).noneMatch(p -> p.isError());
    return r.orThrow();
  }

  /** A policy named {@code name} holding {@code rulesYaml} (a YAML list, indented by 4). */
  static String policy(String name, int order, String rulesYaml) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: %s}
        spec:
          order: %d
          rules:
        %s""".formatted(name, order, rulesYaml.stripTrailing().indent(4));
  }

  Scenario saturate(String pool) {
    for (EndpointState s : fleet.endpoints()) {
      if (pool.equals(s.endpoint().label(InferencePool.POOL_LABEL))) {
        s.updateMetrics(EndpointMetrics.of(50, 20, 0.97, NOW));
      }
    }
    return this;
  }

  Scenario load(String endpointId, int waiting, double kv) {
    EndpointState s = fleet.get(endpointId);
    assertThat(s).as(endpointId).isNotNull();
    s.updateMetrics(EndpointMetrics.of(waiting, 1, kv, NOW));
    return this;
  }

  private static void idle(EndpointState s) {
    s.updateMetrics(EndpointMetrics.of(0, 0, 0.1, NOW));
  }

  PolicyVerdict eval(InferenceRequest r) {
    return engine.evaluate(r, fleet.snapshot());
  }

  PolicyVerdict.Proceed proceed(InferenceRequest r) {
    PolicyVerdict v = eval(r);
    assertThat(v).as("%s", v).isInstanceOf(PolicyVerdict.Proceed.class);
    return (PolicyVerdict.Proceed) v;
  }

  PolicyVerdict.Reject reject(InferenceRequest r) {
    PolicyVerdict v = eval(r);
    assertThat(v).as("%s", v).isInstanceOf(PolicyVerdict.Reject.class);
    return (PolicyVerdict.Reject) v;
  }

  /** Ids of fleet members the verdict's candidate predicate admits. */
  java.util.List<String> candidates(PolicyVerdict.Proceed p) {
    var pred = p.candidates();
    return fleet.endpoints().stream()
        .filter(s -> pred == null ? !s.endpoint().isExternal() && s.endpoint().model().equals(p.request().model())
            : pred.test(s))
        .map(EndpointState::id).sorted().toList();
  }

  static InferenceRequest.Builder request(String model) {
    return InferenceRequest.builder(model).user("What is the capital of France?").tenant("a");
  }
}
