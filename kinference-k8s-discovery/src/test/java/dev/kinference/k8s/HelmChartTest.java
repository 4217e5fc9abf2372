package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Renders {@code deploy/helm/kinference} as {@code helm install --dry-run} would, manifests and NOTES, and checks
 * every manifest kind and the state-store settings. Helm is not available to the build, so the chart keeps to the
 * part of the template language that {@link HelmTemplate} renders (and refuses everything else); where a
 * {@code helm} binary is installed (on the PATH, or named by {@code KINFERENCE_HELM}), {@link
 * #rendersAsHelmDoesWhereHelmIsInstalled} checks that both render the same manifests and NOTES for every
 * {@link #SCENARIOS scenario}, and fail on the same invalid values.
 */
class HelmChartTest {

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  static final Path CHART = Path.of("..", "deploy", "helm", "kinference");

  /** Value overrides, by dotted path as with {@code --set}, that the tests and the comparison with Helm use. */
  static final Map<String, Map<String, Object>> SCENARIOS = scenarios();

  private static Map<String, Map<String, Object>> scenarios() {
    Map<String, Map<String, Object>> s = new LinkedHashMap<>();
    s.put("defaults", Map.of());
    s.put("one replica", Map.of("replicas", 1));
    s.put("five replicas", Map.of("replicas", 5));
    s.put("uri", Map.of("stateStore.uri", "rediss://valkey.cache.svc:6380/2", "stateStore.failureMode", "closed"));
    s.put("uri and password", Map.of("stateStore.uri", "redis://redis.cache:6379",
        "stateStore.passwordSecret", "redis-auth"));
    s.put("existing secret", Map.of("stateStore.existingSecret", "kinference-store",
        "stateStore.existingSecretKey", "url"));
    s.put("deploy redis", Map.of("stateStore.deployRedis", true));
    s.put("deploy redis, closed, persistent, password, no network policy", Map.of("stateStore.deployRedis", true,
        "stateStore.failureMode", "closed", "stateStore.redis.persistence.enabled", true,
        "stateStore.redis.persistence.storageClass", "fast-ssd", "stateStore.passwordSecret", "redis-auth",
        "stateStore.redis.networkPolicy", false, "stateStore.redis.image.repository", "valkey/valkey",
        "stateStore.redis.image.tag", "8-alpine"));
    s.put("admin key", Map.of("admin.existingSecret", "kinference-admin"));
    s.put("epp", Map.of("mode", "epp", "epp.inferencePool", "llm/qwen3", "epp.tenantHeader", "x-kinference-tenant",
        "epp.objectives", true, "epp.policies", "apiVersion: kinference.dev/v1alpha1\nkind: Tenant\n",
        "stateStore.uri", "redis://redis.cache:6379"));
    s.put("epp without a pool", Map.of("mode", "epp"));
    s.put("uri and deploy redis", Map.of("stateStore.uri", "redis://r:6379", "stateStore.deployRedis", true));
    s.put("uri and existing secret", Map.of("stateStore.uri", "redis://r:6379",
        "stateStore.existingSecret", "s"));
    s.put("not a redis uri", Map.of("stateStore.uri", "memory"));
    s.put("unknown failure mode", Map.of("stateStore.failureMode", "half-open"));
    s.put("password without a store", Map.of("stateStore.passwordSecret", "redis-auth"));
    s.put("provider keys", Map.of("providers", Map.of(
        "openai", Map.of("existingSecret", "openai", "env", "OPENAI_API_KEY"),
        "anthropic", Map.of("existingSecret", "llm-keys", "key", "anthropic", "env", "ANTHROPIC_API_KEY"))));
    s.put("everything", Map.of("stateStore.existingSecret", "kinference-store",
        "stateStore.passwordSecret", "redis-auth", "admin.existingSecret", "kinference-admin",
        "providers.openai", Map.of("existingSecret", "openai", "env", "OPENAI_API_KEY")));
    s.put("scheduling", Map.of("nodeSelector", Map.of("kubernetes.io/arch", "amd64"),
        "tolerations", List.of(Map.of("key", "dedicated", "operator", "Equal", "value", "gateway",
            "effect", "NoSchedule")),
        "affinity", Map.of("nodeAffinity", Map.of("requiredDuringSchedulingIgnoredDuringExecution",
            Map.of("nodeSelectorTerms", List.of(Map.of("matchExpressions", List.of(Map.of(
                "key", "node-pool", "operator", "In", "values", List.of("gateway", "general")))))))),
        "topologySpreadConstraints", List.of(Map.of("maxSkew", 2, "topologyKey", "topology.kubernetes.io/zone",
            "whenUnsatisfiable", "DoNotSchedule", "labelSelector",
            Map.of("matchLabels", Map.of("app.kubernetes.io/name", "kinference"))))));
    s.put("no spreading, cpu limit", Map.of("topologySpread.enabled", false, "resources.limitsCpu", "2",
        "resources.requestsCpu", "500m"));
    s.put("pdb max unavailable", withNull("pdb.minAvailable", Map.of("pdb.maxUnavailable", "50%")));
    s.put("pdb disabled", Map.of("pdb.enabled", false));
    s.put("pdb both", Map.of("pdb.maxUnavailable", 1));
    s.put("pdb neither", withNull("pdb.minAvailable", Map.of()));
    s.put("provider without a secret", Map.of("providers.openai", Map.of("env", "OPENAI_API_KEY")));
    s.put("provider with a bad variable", Map.of("providers.openai", Map.of("existingSecret", "openai",
        "env", "KINFERENCE_ADMIN_KEY")));
    return s;
  }

  /** {@code overrides} and {@code key: null}, which removes the chart's value as in a values file. */
  private static Map<String, Object> withNull(String key, Map<String, Object> overrides) {
    Map<String, Object> m = new LinkedHashMap<>(overrides);
    m.put(key, null);
    return m;
  }

  /** What the chart renders: {@code NOTES.txt}'s text and the manifests by "Kind/name". */
  record Rendered(Map<String, JsonNode> manifests, String notes) {

    JsonNode get(String key) {
      JsonNode n = manifests.get(key);
      assertThat(n).as("%s in %s", key, manifests.keySet()).isNotNull();
      return Objects.requireNonNull(n);
    }

    /** The gateway container's {@code env}, by name. */
    Map<String, JsonNode> gatewayEnv() {
      Map<String, JsonNode> env = new LinkedHashMap<>();
      get("Deployment/kinference").at("/spec/template/spec/containers/0/env")
          .forEach(e -> assertThat(env.put(e.path("name").asText(), e)).isNull());
      return env;
    }
  }

  /** Every rendered document, by "Kind/name", with the chart's own values. */
  static Map<String, JsonNode> render(String release, String namespace) throws IOException {
    return render(release, namespace, Map.of()).manifests();
  }

  static Rendered render(String release, String namespace, Map<String, Object> overrides) throws IOException {
    Load load = new Load(LoadSettings.builder().build());
    @SuppressWarnings("unchecked")
    Map<String, Object> values = (Map<String, Object>) HelmTemplate.asHelmValues(load.loadFromString(
        Files.readString(CHART.resolve("values.yaml"))));
    merge(values, nested(overrides));
    @SuppressWarnings("unchecked")
    Map<String, Object> chartYaml = (Map<String, Object>) load.loadFromString(
        Files.readString(CHART.resolve("Chart.yaml")));
    Map<String, Object> chart = new LinkedHashMap<>();
    chartYaml.forEach((k, v) -> chart.put(Character.toUpperCase(k.charAt(0)) + k.substring(1), v));
    Map<String, Object> releaseObject = Map.of("Name", release, "Namespace", namespace, "Service", "Helm",
        "IsInstall", true, "IsUpgrade", false, "Revision", 1L);
    Map<String, Object> top = Map.of("Values", values, "Release", releaseObject, "Chart", chart);
    Map<String, JsonNode> out = new TreeMap<>();
    String notes = "";
    List<Path> templates;
    try (Stream<Path> s = Files.list(CHART.resolve("templates"))) {
      templates = s.sorted().toList();
    }
    for (Path t : templates) {
      String name = t.getFileName().toString();
      String rendered = HelmTemplate.render(Files.readString(t), name, top);
      if (name.equals("NOTES.txt")) {
        notes = rendered;
        continue;
      }
      assertThat(name).as("templates/ holds manifests (*.yaml) and NOTES.txt only").endsWith(".yaml");
      out.putAll(manifests(rendered));
    }
    return new Rendered(out, notes);
  }

  /** The documents of a YAML stream by "Kind/name", empty ones left out (as Helm leaves them out). */
  static Map<String, JsonNode> manifests(String yaml) {
    Map<String, JsonNode> out = new TreeMap<>();
    for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(yaml)) {
      if (doc == null) {
        continue;
      }
      JsonNode node = EndpointMapper.JSON.valueToTree(doc);
      String key = node.path("kind").asText() + "/" + node.path("metadata").path("name").asText();
      assertThat(out.put(key, node)).as("duplicate %s", key).isNull();
    }
    return out;
  }

  /** {@code a.b.c -> v} as {@code {a: {b: {c: v}}}}, numbers as Helm reads them from a values file. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> nested(Map<String, Object> dotted) {
    Map<String, Object> out = new LinkedHashMap<>();
    dotted.forEach((path, v) -> {
      String[] keys = path.split("\\.");
      Map<String, Object> cur = out;
      for (int i = 0; i < keys.length - 1; i++) {
        cur = (Map<String, Object>) cur.computeIfAbsent(keys[i], k -> new LinkedHashMap<String, Object>());
      }
      cur.put(keys[keys.length - 1], HelmTemplate.asHelmValues(v));
    });
    return out;
  }

  /** Helm's coalescing of a values file over the chart's: maps merge, anything else replaces. */
  @SuppressWarnings("unchecked")
  private static void merge(Map<String, Object> base, Map<String, Object> over) {
    over.forEach((k, v) -> {
      if (v instanceof Map<?, ?> m && base.get(k) instanceof Map<?, ?> b) {
        merge((Map<String, Object>) b, (Map<String, Object>) m);
      } else {
        base.put(k, v);
      }
    });
  }

  @Test
  void everyManifestKindRendersAsValidYaml() throws IOException {
    Map<String, JsonNode> docs = render("kinference", "gateway");
    List<String> kinds = new ArrayList<>();
    docs.values().forEach(d -> kinds.add(d.path("kind").asText()));
    assertThat(kinds).containsExactlyInAnyOrder("ConfigMap", "Deployment", "PodDisruptionBudget", "Role", "Role",
        "RoleBinding", "RoleBinding", "Service", "ServiceAccount");
    for (JsonNode d : docs.values()) {
      assertThat(d.path("apiVersion").asText()).isNotBlank();
      assertThat(d.path("metadata").path("name").asText()).startsWith("kinference");
      assertThat(d.path("metadata").path("labels").path("app.kubernetes.io/instance").asText())
          .isEqualTo("kinference");
    }
  }

  @Test
  void theDeploymentRunsSeveralProbedReplicasScrapedByPrometheus() throws IOException {
    JsonNode d = render("kinference", "gateway").get("Deployment/kinference");
    assertThat(d.path("metadata").path("namespace").asText()).isEqualTo("gateway");
    assertThat(d.at("/spec/replicas").asInt()).isGreaterThan(1);
    assertThat(d.at("/spec/selector/matchLabels")).isEqualTo(d.at("/spec/template/metadata/labels"));
    JsonNode pod = d.at("/spec/template");
    assertThat(pod.at("/metadata/annotations/prometheus.io~1scrape").asText()).isEqualTo("true");
    assertThat(pod.at("/metadata/annotations/prometheus.io~1port").asText()).isEqualTo("8080");
    assertThat(pod.at("/spec/serviceAccountName").asText()).isEqualTo("kinference");
    JsonNode c = pod.at("/spec/containers/0");
    assertThat(c.at("/image").asText()).isEqualTo("ghcr.io/kinference/kinference-gateway:0.1.0-SNAPSHOT");
    assertThat(c.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/ready");
    assertThat(c.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/health");
    assertThat(c.at("/ports/0/containerPort").asInt()).isEqualTo(8080);
    assertThat(c.at("/envFrom/0/configMapRef/name").asText()).isEqualTo("kinference-config");
    // The gateway listens beyond loopback, discovers the servers and reads the policy resources (regression: the
    // chart ran 'serve --port 8080' alone, which serves simulated servers on 127.0.0.1).
    List<String> args = new ArrayList<>();
    c.at("/args").forEach(a -> args.add(a.asText()));
    assertThat(args).containsExactly("serve", "--host", "0.0.0.0", "--port", "8080", "--discovery", "kubernetes",
        "--policy-namespace", "llm", "--index", "precise", "--drain-timeout", "300s", "--probe-port", "8081");
    assertThat(c.at("/livenessProbe/httpGet/port").asText()).isEqualTo("probes");
    assertThat(c.at("/ports/1/containerPort").asInt()).isEqualTo(8081);
    // a rollout loses no stream: a preStop sleep while the endpoints update, a drain, a grace period beyond both
    assertThat(c.at("/lifecycle/preStop/exec/command/0").asText()).isEqualTo("sleep");
    assertThat(pod.at("/spec/terminationGracePeriodSeconds").asInt()).isGreaterThan(300 + 10);
    JsonNode svc = render("kinference", "gateway").get("Service/kinference");
    assertThat(svc.at("/spec/selector")).isEqualTo(d.at("/spec/selector/matchLabels"));
    assertThat(svc.at("/spec/ports/0/targetPort").asText()).isEqualTo("http");
  }

  @Test
  void rbacGrantsOnlyWhatIsWatchedInTheWatchedNamespaces() throws IOException {
    Map<String, JsonNode> docs = render("kinference", "gateway");
    JsonNode discovery = docs.get("Role/kinference-discovery");
    JsonNode policy = docs.get("Role/kinference-policy");
    assertThat(discovery.at("/metadata/namespace").asText()).isEqualTo("llm");
    assertThat(policy.at("/metadata/namespace").asText()).isEqualTo("llm");
    assertThat(discovery.toString()).contains("endpointslices").contains("pods");
    for (JsonNode role : List.of(discovery, policy)) {
      for (JsonNode rule : role.path("rules")) {
        List<String> verbs = new ArrayList<>();
        rule.path("verbs").forEach(v -> verbs.add(v.asText()));
        List<String> resources = new ArrayList<>();
        rule.path("resources").forEach(v -> resources.add(v.asText()));
        if (resources.equals(List.of("events"))) {
          assertThat(verbs).containsExactly("create");
        } else {
          assertThat(verbs).containsExactly("get", "list", "watch");
        }
      }
    }
    List<String> watched = new ArrayList<>();
    policy.at("/rules/0/resources").forEach(v -> watched.add(v.asText()));
    assertThat(watched).containsExactlyInAnyOrderElementsOf(PolicyResourceSource.KINDS.values());
    assertThat(docs.keySet()).noneMatch(k -> k.startsWith("ClusterRole"));
    for (String binding : List.of("RoleBinding/kinference-discovery", "RoleBinding/kinference-policy")) {
      JsonNode b = docs.get(binding);
      assertThat(b.at("/subjects/0/name").asText()).isEqualTo("kinference");
      assertThat(b.at("/subjects/0/namespace").asText()).isEqualTo("gateway");
    }
  }

  @Test
  void theConfigMapConfiguresTheKubernetesEndpointSource() throws IOException {
    JsonNode cm = render("kinference", "gateway").get("ConfigMap/kinference-config");
    Map<String, String> env = new TreeMap<>();
    cm.path("data").properties().forEach(e -> env.put(e.getKey(), e.getValue().asText()));
    // The same variables KubernetesEndpointSource's no-argument constructor reads.
    KubernetesEndpointSource.Builder b = KubernetesEndpointSource.Builder.fromEnvironment(env);
    assertThat(b.build()).isNotNull();
    assertThat(env).containsEntry("KINFERENCE_K8S_SERVICE", "vllm-qwen3").containsEntry("KINFERENCE_K8S_NAMESPACE",
        "llm");
  }

  @Test
  void theExamplesAreValidYamlAndTheVllmPodsCarryTheAnnotations() throws IOException {
    String text = Files.readString(Path.of("..", "deploy", "examples", "vllm-qwen3.yaml"));
    JsonNode deployment = null;
    for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(text)) {
      JsonNode n = EndpointMapper.JSON.valueToTree(doc);
      if (n.path("kind").asText().equals("Deployment")) {
        deployment = n;
      }
    }
    assertThat(deployment).isNotNull();
    JsonNode ann = deployment.at("/spec/template/metadata/annotations");
    assertThat(ann.path(PodAnnotations.MODEL).asText()).isEqualTo("Qwen/Qwen3-8B");
    assertThat(ann.path(PodAnnotations.KV_EVENTS).asText()).isEqualTo("tcp://*:5557");
    String args = deployment.at("/spec/template/spec/containers/0/args").toString();
    assertThat(args).contains("--kv-events-config").contains("\\\"publisher\\\": \\\"zmq\\\"")
        .contains("tcp://*:5557");
    assertThat(text).doesNotContain("name: PYTHONHASHSEED");
  }

  private static Rendered scenario(String name) throws IOException {
    return render("kinference", "gateway", Objects.requireNonNull(SCENARIOS.get(name), name));
  }

  private static String text(Map<String, JsonNode> env, String name) {
    JsonNode e = env.get(name);
    assertThat(e).as("env %s in %s", name, env.keySet()).isNotNull();
    assertThat(Objects.requireNonNull(e).has("valueFrom")).as("%s is a plain value", name).isFalse();
    return e.path("value").asText();
  }

  private static JsonNode secretRef(Map<String, JsonNode> env, String name) {
    JsonNode e = env.get(name);
    assertThat(e).as("env %s in %s", name, env.keySet()).isNotNull();
    assertThat(Objects.requireNonNull(e).has("value")).as("%s comes from a Secret only", name).isFalse();
    return e.at("/valueFrom/secretKeyRef");
  }

  @Test
  void byDefaultThereIsNoStateStoreAndTheNotesWarnThatLimitsArePerReplica() throws IOException {
    Rendered r = scenario("defaults");
    Map<String, JsonNode> env = r.gatewayEnv();
    assertThat(env.keySet()).containsExactly("KINFERENCE_REPLICAS");
    assertThat(text(env, "KINFERENCE_REPLICAS")).isEqualTo("3");
    assertThat(r.manifests().keySet()).noneMatch(k -> k.contains("redis"));
    assertThat(r.notes())
        .contains("WARNING: RATE LIMITS, BUDGETS AND USAGE TOTALS ARE PER REPLICA.")
        .contains("a tenant's\n  5,000 tokens/minute limit admits up to 3 x 5,000 = 15000 tokens/minute")
        .contains("kinference_state_store_info{store=\"memory\",failure=\"open\"} 1")
        .contains("--set stateStore.uri=redis://HOST:6379/0").contains("--set stateStore.existingSecret=SECRET")
        .contains("--set stateStore.deployRedis=true (one Redis pod, not for production)")
        .contains("http://kinference.gateway.svc:80/v1/chat/completions")
        .contains("kubectl -n gateway port-forward svc/kinference 8080:80")
        .contains("none is set: put one in a Secret and name it in admin.existingSecret");
  }

  @Test
  void theReplicaCountReachesTheGatewayAndOneReplicaNeedsNoWarning() throws IOException {
    Rendered five = scenario("five replicas");
    assertThat(five.get("Deployment/kinference").at("/spec/replicas").asInt()).isEqualTo(5);
    assertThat(text(five.gatewayEnv(), "KINFERENCE_REPLICAS")).isEqualTo("5");
    assertThat(five.notes()).contains("each of the 5 replicas counts on its own").contains("5 x 5,000 = 25000");
    Rendered one = scenario("one replica");
    assertThat(one.get("Deployment/kinference").at("/spec/replicas").asInt()).isEqualTo(1);
    assertThat(text(one.gatewayEnv(), "KINFERENCE_REPLICAS")).isEqualTo("1");
    assertThat(one.notes()).doesNotContain("WARNING").contains("none: each replica counts in its own memory.");
  }

  @Test
  void aStoreUriIsPassedWithItsFailureMode() throws IOException {
    Rendered r = scenario("uri");
    Map<String, JsonNode> env = r.gatewayEnv();
    assertThat(env.keySet()).containsExactly("KINFERENCE_REPLICAS", "KINFERENCE_STATE_STORE",
        "KINFERENCE_STATE_STORE_FAILURE");
    assertThat(text(env, "KINFERENCE_STATE_STORE")).isEqualTo("rediss://valkey.cache.svc:6380/2");
    assertThat(text(env, "KINFERENCE_STATE_STORE_FAILURE")).isEqualTo("closed");
    assertThat(r.manifests().keySet()).noneMatch(k -> k.contains("redis"));
    assertThat(r.notes()).doesNotContain("WARNING").contains("stateStore.uri, shared by all replicas; failure mode closed")
        .doesNotContain("valkey.cache").contains("kinference_state_store_up");

    Map<String, JsonNode> withPassword = scenario("uri and password").gatewayEnv();
    assertThat(text(withPassword, "KINFERENCE_STATE_STORE")).isEqualTo("redis://redis.cache:6379");
    assertThat(text(withPassword, "KINFERENCE_STATE_STORE_FAILURE")).isEqualTo("open");
    JsonNode password = secretRef(withPassword, "KINFERENCE_STATE_STORE_PASSWORD");
    assertThat(password.path("name").asText()).isEqualTo("redis-auth");
    assertThat(password.path("key").asText()).isEqualTo("password");
  }

  @Test
  void aStoreUriWithCredentialsComesFromASecret() throws IOException {
    Rendered r = scenario("existing secret");
    Map<String, JsonNode> env = r.gatewayEnv();
    JsonNode ref = secretRef(env, "KINFERENCE_STATE_STORE");
    assertThat(ref.path("name").asText()).isEqualTo("kinference-store");
    assertThat(ref.path("key").asText()).isEqualTo("url");
    assertThat(text(env, "KINFERENCE_STATE_STORE_FAILURE")).isEqualTo("open");
    assertThat(env).doesNotContainKey("KINFERENCE_STATE_STORE_PASSWORD");
    assertThat(r.notes()).doesNotContain("WARNING")
        .contains("the URI in key url of Secret kinference-store, shared by all replicas; failure mode open.");
    // The key defaults to "uri".
    JsonNode byDefault = secretRef(render("kinference", "gateway",
        Map.of("stateStore.existingSecret", "kinference-store")).gatewayEnv(), "KINFERENCE_STATE_STORE");
    assertThat(byDefault.path("key").asText()).isEqualTo("uri");
  }

  @Test
  void deployRedisRunsOneRedisForTryingAndPointsTheGatewayAtIt() throws IOException {
    Rendered r = scenario("deploy redis");
    assertThat(text(r.gatewayEnv(), "KINFERENCE_STATE_STORE")).isEqualTo("redis://kinference-redis.gateway.svc:6379");
    assertThat(text(r.gatewayEnv(), "KINFERENCE_STATE_STORE_FAILURE")).isEqualTo("open");
    JsonNode redis = r.get("Deployment/kinference-redis");
    JsonNode svc = r.get("Service/kinference-redis");
    assertThat(redis.at("/metadata/namespace").asText()).isEqualTo("gateway");
    assertThat(redis.at("/spec/replicas").asInt()).isEqualTo(1);
    assertThat(redis.at("/spec/strategy/type").asText()).isEqualTo("Recreate");
    JsonNode podLabels = redis.at("/spec/template/metadata/labels");
    assertThat(selects(svc.at("/spec/selector"), podLabels)).isTrue();
    assertThat(selects(redis.at("/spec/selector/matchLabels"), podLabels)).isTrue();
    assertThat(svc.at("/spec/ports/0/port").asInt()).isEqualTo(6379);
    // The gateway's Service and PodDisruptionBudget do not take the Redis pod for a gateway.
    assertThat(selects(r.get("Service/kinference").at("/spec/selector"), podLabels)).isFalse();
    assertThat(selects(r.get("PodDisruptionBudget/kinference").at("/spec/selector/matchLabels"), podLabels))
        .isFalse();
    JsonNode pod = redis.at("/spec/template/spec");
    assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(pod.at("/securityContext/runAsUser").asInt()).isPositive();
    JsonNode c = pod.at("/containers/0");
    assertThat(c.at("/image").asText()).isEqualTo("redis:7-alpine");
    assertThat(c.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(c.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(c.at("/volumeMounts/0/mountPath").asText()).isEqualTo("/data");
    assertThat(pod.at("/volumes/0/emptyDir").isObject()).isTrue();
    assertThat(strings(c.at("/args"))).containsExactly("--protected-mode", "no", "--save", "", "--appendonly", "no");
    assertThat(c.has("env")).isFalse();
    // Only the gateway's pods may reach it.
    JsonNode np = r.get("NetworkPolicy/kinference-redis");
    assertThat(np.at("/spec/podSelector/matchLabels")).isEqualTo(redis.at("/spec/selector/matchLabels"));
    assertThat(np.at("/spec/ingress/0/from/0/podSelector/matchLabels"))
        .isEqualTo(r.get("Deployment/kinference").at("/spec/selector/matchLabels"));
    assertThat(r.manifests()).doesNotContainKey("PersistentVolumeClaim/kinference-redis");
    assertThat(r.notes()).doesNotContain("WARNING")
        .contains("the chart's Redis, redis://kinference-redis.gateway.svc:6379, shared by all replicas")
        .contains("is for trying the chart only, NOT for production")
        .contains("While it is down the gateway\n  admits limit/3 per replica (failure mode open).")
        .contains("usage totals and counters are lost when it restarts")
        .contains("a managed Redis/Valkey, Sentinel or Cluster");
  }

  @Test
  void deployRedisKeepsUsageOnAVolumeAndTakesThePasswordWhenAsked() throws IOException {
    Rendered r = scenario("deploy redis, closed, persistent, password, no network policy");
    JsonNode redis = r.get("Deployment/kinference-redis");
    JsonNode c = redis.at("/spec/template/spec/containers/0");
    assertThat(c.at("/image").asText()).isEqualTo("valkey/valkey:8-alpine");
    assertThat(strings(c.at("/args"))).containsExactly("--protected-mode", "no", "--appendonly", "yes",
        "--appendfsync", "everysec", "--requirepass", "$(REDIS_PASSWORD)");
    assertThat(c.at("/env/0/name").asText()).isEqualTo("REDIS_PASSWORD");
    assertThat(c.at("/env/0/valueFrom/secretKeyRef/name").asText()).isEqualTo("redis-auth");
    JsonNode pvc = r.get("PersistentVolumeClaim/kinference-redis");
    assertThat(redis.at("/spec/template/spec/volumes/0/persistentVolumeClaim/claimName").asText())
        .isEqualTo("kinference-redis");
    assertThat(pvc.at("/spec/storageClassName").asText()).isEqualTo("fast-ssd");
    assertThat(pvc.at("/spec/resources/requests/storage").asText()).isEqualTo("1Gi");
    assertThat(r.manifests()).doesNotContainKey("NetworkPolicy/kinference-redis");
    Map<String, JsonNode> env = r.gatewayEnv();
    assertThat(text(env, "KINFERENCE_STATE_STORE_FAILURE")).isEqualTo("closed");
    assertThat(secretRef(env, "KINFERENCE_STATE_STORE_PASSWORD").path("name").asText()).isEqualTo("redis-auth");
    assertThat(r.notes()).contains("While it is down the gateway\n  answers 503 (failure mode closed).").doesNotContain("lost when");
    // Without a storage class the cluster's default is used: the field is left out, not set empty.
    JsonNode defaultClass = render("kinference", "gateway", Map.of("stateStore.deployRedis", true,
        "stateStore.redis.persistence.enabled", true)).get("PersistentVolumeClaim/kinference-redis");
    assertThat(defaultClass.at("/spec").has("storageClassName")).isFalse();
  }

  @Test
  void theAdminKeyComesFromASecret() throws IOException {
    Rendered r = scenario("admin key");
    JsonNode ref = secretRef(r.gatewayEnv(), "KINFERENCE_ADMIN_KEY");
    assertThat(ref.path("name").asText()).isEqualTo("kinference-admin");
    assertThat(ref.path("key").asText()).isEqualTo("admin-key");
    assertThat(r.notes()).contains("from key admin-key of Secret kinference-admin")
        .contains("kubectl -n gateway get secret kinference-admin -o jsonpath='{.data.admin-key}' | base64 -d");
  }

  @Test
  void byDefaultThePodsSpreadSoftlyAcrossZonesAndNodesWithADisruptionBudget() throws IOException {
    Rendered r = scenario("defaults");
    JsonNode d = r.get("Deployment/kinference");
    JsonNode pod = d.at("/spec/template/spec");
    JsonNode spread = pod.path("topologySpreadConstraints");
    List<String> keys = new ArrayList<>();
    for (JsonNode c : spread) {
      keys.add(c.path("topologyKey").asText());
      assertThat(c.path("maxSkew").asInt()).isEqualTo(1);
      assertThat(c.path("whenUnsatisfiable").asText()).isEqualTo("ScheduleAnyway");
      assertThat(c.at("/labelSelector/matchLabels")).isEqualTo(d.at("/spec/selector/matchLabels"));
    }
    assertThat(keys).containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
    assertThat(pod.has("affinity")).isFalse();
    assertThat(pod.has("nodeSelector")).isFalse();
    assertThat(pod.has("tolerations")).isFalse();
    JsonNode resources = pod.at("/containers/0/resources");
    assertThat(resources.at("/requests/cpu").asText()).isEqualTo("1");
    assertThat(resources.at("/requests/memory").asText()).isEqualTo("1Gi");
    assertThat(resources.at("/limits/memory").asText()).isEqualTo("2Gi");
    assertThat(resources.at("/limits").has("cpu")).as("no CPU limit by default").isFalse();
    JsonNode pdb = r.get("PodDisruptionBudget/kinference").path("spec");
    assertThat(pdb.path("minAvailable").asInt()).isEqualTo(1);
    assertThat(pdb.has("maxUnavailable")).isFalse();
    assertThat(pdb.at("/selector/matchLabels")).isEqualTo(d.at("/spec/selector/matchLabels"));
  }

  @Test
  void schedulingValuesReachThePodSpecAsWritten() throws IOException {
    Map<String, Object> values = nested(Objects.requireNonNull(SCENARIOS.get("scheduling")));
    JsonNode pod = scenario("scheduling").get("Deployment/kinference").at("/spec/template/spec");
    for (String key : List.of("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints")) {
      // through JSON text, so that numbers are the same kind of node on both sides
      assertThat(pod.path(key)).as(key).isEqualTo(JSON.readTree(
          JSON.writeValueAsString(plainNumbers(values.get(key)))));
    }
    assertThat(pod.at("/topologySpreadConstraints/0/maxSkew").isIntegralNumber()).isTrue();
    Rendered r = scenario("no spreading, cpu limit");
    JsonNode unspread = r.get("Deployment/kinference").at("/spec/template/spec");
    assertThat(unspread.has("topologySpreadConstraints")).isFalse();
    assertThat(unspread.at("/containers/0/resources/limits/cpu").asText()).isEqualTo("2");
    assertThat(unspread.at("/containers/0/resources/requests/cpu").asText()).isEqualTo("500m");
  }

  /** Helm's float64 numbers as the integers they print as. */
  private static @Nullable Object plainNumbers(@Nullable Object v) {
    if (v instanceof Map<?, ?> m) {
      Map<Object, Object> out = new LinkedHashMap<>();
      m.forEach((k, x) -> out.put(k, plainNumbers(x)));
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      l.forEach(x -> out.add(plainNumbers(x)));
      return out;
    }
    return v instanceof Double d && d == Math.rint(d) ? (Object) d.longValue() : v;
  }

  @Test
  void theDisruptionBudgetTakesMinAvailableOrMaxUnavailable() throws IOException {
    JsonNode pdb = scenario("pdb max unavailable").get("PodDisruptionBudget/kinference").path("spec");
    assertThat(pdb.path("maxUnavailable").asText()).isEqualTo("50%");
    assertThat(pdb.has("minAvailable")).isFalse();
    assertThat(scenario("pdb disabled").manifests().keySet()).noneMatch(k -> k.startsWith("PodDisruptionBudget"));
    assertThatThrownBy(() -> scenario("pdb both")).isInstanceOf(HelmTemplate.RenderException.class)
        .hasMessageContaining("pdb: give minAvailable or maxUnavailable, not both");
    assertThatThrownBy(() -> scenario("pdb neither")).isInstanceOf(HelmTemplate.RenderException.class)
        .hasMessageContaining("pdb: give minAvailable or maxUnavailable (or set pdb.enabled to false)");
  }

  @Test
  void providerKeysComeFromSecretsUnderTheVariablesTheExternalProvidersName() throws IOException {
    Map<String, JsonNode> env = scenario("provider keys").gatewayEnv();
    JsonNode openai = secretRef(env, "OPENAI_API_KEY");
    assertThat(openai.path("name").asText()).isEqualTo("openai");
    assertThat(openai.path("key").asText()).as("the default key").isEqualTo("api-key");
    JsonNode anthropic = secretRef(env, "ANTHROPIC_API_KEY");
    assertThat(anthropic.path("name").asText()).isEqualTo("llm-keys");
    assertThat(anthropic.path("key").asText()).isEqualTo("anthropic");
    // The example ExternalProvider's apiKey.env is a variable the chart can set this way.
    assertThat(examplesApiKeyEnv()).contains("OPENAI_API_KEY");
    assertThatThrownBy(() -> scenario("provider without a secret")).isInstanceOf(HelmTemplate.RenderException.class)
        .hasMessageContaining("providers.openai: give existingSecret");
    assertThatThrownBy(() -> scenario("provider with a bad variable"))
        .isInstanceOf(HelmTemplate.RenderException.class)
        .hasMessageContaining("providers.openai.env: KINFERENCE_ADMIN_KEY is not a variable name");
  }

  /** The apiKey.env of the ExternalProviders in deploy/examples/policies.yaml. */
  private static List<String> examplesApiKeyEnv() throws IOException {
    List<String> out = new ArrayList<>();
    String text = Files.readString(Path.of("..", "deploy", "examples", "policies.yaml"));
    for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(text)) {
      JsonNode n = JSON.valueToTree(doc);
      if (n.path("kind").asText().equals("ExternalProvider") && n.at("/spec/apiKey").has("env")) {
        out.add(n.at("/spec/apiKey/env").asText());
      }
    }
    return out;
  }

  /**
   * Variables the chart sets that are read by something other than the gateway's own code: the JVM reads
   * JAVA_TOOL_OPTIONS. (Provider keys are read through an ExternalProvider's apiKey.env, checked below.)
   */
  private static final List<String> READ_BY_THE_JVM = List.of("JAVA_TOOL_OPTIONS");

  @Test
  void everyVariableTheChartSetsIsReadByTheGateway() throws IOException {
    // The gateway's main sources: the command line, the gateway, discovery, the state store.
    StringBuilder sources = new StringBuilder();
    try (Stream<Path> modules = Files.list(Path.of(".."))) {
      for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("kinference-")).toList()) {
        Path main = module.resolve("src/main/java");
        if (!Files.isDirectory(main)) {
          continue;
        }
        try (Stream<Path> files = Files.walk(main)) {
          for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
            sources.append(Files.readString(f)).append('\n');
          }
        }
      }
    }
    List<String> providerKeys = List.of("OPENAI_API_KEY");
    Map<String, String> setBy = new TreeMap<>();
    for (String s : List.of("defaults", "everything", "deploy redis")) {
      Rendered r = scenario(s);
      r.gatewayEnv().keySet().forEach(name -> setBy.put(name, "the Deployment (" + s + ")"));
      r.get("ConfigMap/kinference-config").path("data").properties()
          .forEach(e -> setBy.put(e.getKey(), "the ConfigMap"));
    }
    assertThat(setBy).containsKeys("KINFERENCE_LOG_LEVEL", "KINFERENCE_POLICY_NAMESPACE", "KINFERENCE_REPLICAS",
        "KINFERENCE_STATE_STORE", "KINFERENCE_STATE_STORE_PASSWORD", "KINFERENCE_STATE_STORE_FAILURE",
        "KINFERENCE_ADMIN_KEY", "OPENAI_API_KEY");
    for (Map.Entry<String, String> e : setBy.entrySet()) {
      String name = e.getKey();
      if (READ_BY_THE_JVM.contains(name)) {
        continue;
      }
      if (providerKeys.contains(name)) {
        assertThat(examplesApiKeyEnv()).as("%s is an ExternalProvider's apiKey.env", name).contains(name);
        continue;
      }
      assertThat(sources.indexOf("\"" + name + "\"") >= 0 || sources.indexOf("${env:" + name + ":") >= 0
          || sources.indexOf("${env:" + name + "}") >= 0)
          .as("%s, set by %s, is read by the gateway's main sources", name, e.getValue()).isTrue();
    }
  }

  @Test
  void contradictoryStateStoreValuesAreRefused() {
    Map<String, String> messages = Map.of(
        "uri and deploy redis", "stateStore: set at most one of uri, existingSecret and deployRedis",
        "uri and existing secret", "stateStore: set at most one of uri, existingSecret and deployRedis",
        "not a redis uri", "stateStore.uri: redis://HOST:PORT[/DB] or rediss://HOST:PORT[/DB]",
        "unknown failure mode", "stateStore.failureMode: open or closed",
        "password without a store", "stateStore.passwordSecret: a password needs a store");
    messages.forEach((name, message) -> assertThatThrownBy(() -> scenario(name))
        .as(name).isInstanceOf(HelmTemplate.RenderException.class).hasMessageContaining(message));
  }

  @Test
  void everyStateStoreManifestIsLabelledForTheRelease() throws IOException {
    Rendered r = scenario("deploy redis, closed, persistent, password, no network policy");
    List<String> kinds = new ArrayList<>();
    r.manifests().values().forEach(d -> kinds.add(d.path("kind").asText()));
    assertThat(kinds).containsExactlyInAnyOrder("ConfigMap", "Deployment", "Deployment", "PodDisruptionBudget",
        "PersistentVolumeClaim", "Role", "Role", "RoleBinding", "RoleBinding", "Service", "Service",
        "ServiceAccount");
    for (JsonNode d : r.manifests().values()) {
      assertThat(d.path("metadata").path("name").asText()).startsWith("kinference");
      assertThat(d.path("metadata").path("labels").path("app.kubernetes.io/instance").asText())
          .isEqualTo("kinference");
    }
  }

  @Test
  void theRendererKeepsToHelmsRules() {
    Map<String, Object> top = Map.of("Values", HelmTemplate.asHelmValues(Map.of("n", 3, "s", "a\"b", "e", "")),
        "Release", Map.of("Name", "r"), "Chart", Map.of());
    assertThat(HelmTemplate.render("a:\n  {{- if gt (int .Values.n) 1 }} x {{ .Values.n }}\n{{- end }} !\n", "t",
        top)).isEqualTo("a: x 3 !\n");
    assertThat(HelmTemplate.render("{{ .Values.s | quote }} {{ .Values.e | default \"d\" }} {{ mul 2 .Values.n }}"
        + "{{/* a comment */}}{{ if .Values.e }}1{{ else if eq .Values.s \"x\" \"a\\\"b\" }}2{{ else }}3{{ end }}",
        "t", top)).isEqualTo("\"a\\\"b\" d 62");
    // As in Helm: values-file numbers are float64, which Go does not compare with an int.
    assertThatThrownBy(() -> HelmTemplate.render("{{ if gt .Values.n 1 }}{{ end }}", "t", top))
        .hasMessageContaining("incompatible types for comparison: float64 and int");
    assertThatThrownBy(() -> HelmTemplate.render("{{ .Values.missing }}", "t", top)).hasMessageContaining("no value");
    assertThatThrownBy(() -> HelmTemplate.render("{{ .Values.missing.deeper }}", "t", top))
        .hasMessageContaining("nil pointer evaluating .Values.missing.deeper");
    assertThatThrownBy(() -> HelmTemplate.render("{{ range .Values.s }}{{ end }}", "t", top))
        .hasMessageContaining("range can't iterate over a\"b");
    assertThatThrownBy(() -> HelmTemplate.render("{{ with .Values.s }}{{ end }}", "t", top))
        .hasMessageContaining("beyond what this chart may use");
    assertThatThrownBy(() -> HelmTemplate.render("{{ include \"x\" . }}", "t", top))
        .hasMessageContaining("function include is beyond what this chart may use");
    assertThatThrownBy(() -> HelmTemplate.render("{{ $x }}", "t", top))
        .hasMessageContaining("undefined variable: $x");
    // range: a map by sorted key with dot the element, a list by index; $ is the top level; else when empty
    Map<String, Object> listsAndMaps = Map.of("Values", HelmTemplate.asHelmValues(Map.of(
        "m", Map.of("b", Map.of("v", 2), "a", Map.of("v", 1)), "l", List.of("x", "y"), "e", List.of())),
        "Release", Map.of("Name", "r"), "Chart", Map.of());
    assertThat(HelmTemplate.render("{{ range $k, $v := .Values.m }}{{ $k }}={{ $v.v }}{{ .v }}{{ $.Release.Name }} "
        + "{{ end }}{{ range $i, $x := .Values.l }}{{ $i }}{{ $x }}{{ end }}{{ range $x := .Values.l }}{{ $x }}"
        + "{{ end }}{{ range .Values.e }}no{{ else }} empty{{ end }}", "t", listsAndMaps))
        .isEqualTo("a=11r b=22r 0x1yxy empty");
    assertThat(HelmTemplate.render("{{ printf \"%s-%d %q\" \"a\" 3 \"b\" }} {{ regexMatch \"^[a-z]+$\" \"ab\" }}",
        "t", listsAndMaps)).isEqualTo("a-3 \"b\" true");
    assertThat(HelmTemplate.render("x:\n  {{- toYaml .Values.m | nindent 2 }}\ny: {{ toYaml .Values.e }}", "t",
        listsAndMaps)).isEqualTo("x:\n  a:\n    v: 1\n  b:\n    v: 2\ny: []");
    assertThatThrownBy(() -> HelmTemplate.render("{{ if .Values.n }}", "t", top))
        .hasMessageContaining("without {{ end }}");
  }

  /**
   * With a {@code helm} at hand, {@code helm install --dry-run=client -o json} of every scenario gives the
   * manifests and NOTES this test renders, or fails with the same message. Helm 3.13 or later.
   */
  @Test
  void rendersAsHelmDoesWhereHelmIsInstalled() throws Exception {
    String helm = helmBinary();
    assumeTrue(helm != null, "no helm on the PATH nor in KINFERENCE_HELM");
    Path dir = Files.createTempDirectory("helm-values");
    try {
      for (Map.Entry<String, Map<String, Object>> s : SCENARIOS.entrySet()) {
        Path values = dir.resolve("values.json");
        Files.writeString(values, EndpointMapper.JSON.writeValueAsString(nested(s.getValue())));
        Process p = new ProcessBuilder(Objects.requireNonNull(helm), "install", "kinference", CHART.toString(),
            "--namespace", "gateway", "--dry-run=client", "--output", "json", "--values", values.toString())
            .redirectError(dir.resolve("stderr").toFile()).redirectOutput(dir.resolve("stdout").toFile()).start();
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("helm ran in time").isTrue();
        String out = Files.readString(dir.resolve("stdout"));
        String err = Files.readString(dir.resolve("stderr"));
        Rendered ours;
        try {
          ours = render("kinference", "gateway", s.getValue());
        } catch (HelmTemplate.RenderException e) {
          assertThat(p.exitValue()).as("%s: helm fails too", s.getKey()).isNotZero();
          assertThat(err).as(s.getKey()).contains(e.getMessage());
          continue;
        }
        assertThat(p.exitValue()).as("%s: %s", s.getKey(), err).isZero();
        JsonNode release = EndpointMapper.JSON.readTree(out);
        assertThat(manifests(release.path("manifest").asText())).as(s.getKey()).isEqualTo(ours.manifests());
        assertThat(release.at("/info/notes").asText()).as(s.getKey()).isEqualTo(ours.notes());
      }
    } finally {
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(dir);
    }
  }

  private static @Nullable String helmBinary() {
    String named = System.getenv("KINFERENCE_HELM");
    if (named != null && !named.isBlank()) {
      return named;
    }
    for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, "helm"))) {
        return Path.of(d, "helm").toString();
      }
    }
    return null;
  }

  /** Whether a Service or label selector selects pods with these labels. */
  private static boolean selects(JsonNode selector, JsonNode labels) {
    assertThat(selector.size()).isPositive();
    for (Map.Entry<String, JsonNode> e : selector.properties()) {
      if (!labels.path(e.getKey()).asText().equals(e.getValue().asText())) {
        return false;
      }
    }
    return true;
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(a -> out.add(a.asText()));
    return out;
  }

  /** Issue 23: the chart's epp mode runs the endpoint picker instead of the gateway. */
  @Test
  void theEppModeRunsThePickerForAnInferencePool() throws IOException {
    Rendered r = scenario("epp");
    assertThat(r.manifests().keySet()).contains("Deployment/kinference-epp", "Service/kinference-epp",
        "ConfigMap/kinference-epp-policies", "Role/kinference-epp")
        .doesNotContain("Deployment/kinference", "Service/kinference");
    JsonNode c = r.get("Deployment/kinference-epp").at("/spec/template/spec/containers/0");
    List<String> args = new ArrayList<>();
    c.at("/args").forEach(a -> args.add(a.asText()));
    assertThat(args).containsExactly("--config=/etc/kinference", "--inference-pool=llm/qwen3", "--port=9002",
        "--index=precise", "--tenant-header=x-kinference-tenant", "--objectives");
    assertThat(c.at("/image").asText()).startsWith("ghcr.io/kinference/kinference-epp:");
    assertThat(c.at("/readinessProbe/grpc/port").asInt()).isEqualTo(9002);
    assertThat(r.get("Service/kinference-epp").at("/spec/ports/0/port").asInt()).isEqualTo(9002);
    assertThat(r.get("ConfigMap/kinference-epp-policies").at("/data/policies.yaml").asText()).contains("Tenant");
    List<String> env = new ArrayList<>();
    c.at("/env").forEach(e -> env.add(e.path("name").asText() + "=" + e.path("value").asText()));
    assertThat(env).contains("KINFERENCE_STATE_STORE=redis://redis.cache:6379", "KINFERENCE_REPLICAS=3",
        "KINFERENCE_STATE_STORE_FAILURE=open");
    assertThatThrownBy(() -> scenario("epp without a pool")).isInstanceOf(HelmTemplate.RenderException.class)
        .hasMessageContaining("epp.inferencePool");
  }
}
