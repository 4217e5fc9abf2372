package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Renders {@code deploy/helm/kinference} as {@code helm template} would and checks every manifest kind. Helm is
 * not available to the build, so the chart keeps to the part of the template language that is plain
 * substitution ({@code {{ .Values.a.b }}}, {@code {{ .Release.Name }}}, {@code {{ .Release.Namespace }}},
 * {@code {{ .Chart.AppVersion }}}), which this test renders exactly; any other template construct fails the test,
 * so the chart cannot drift beyond what is checked here.
 */
class HelmChartTest {

  static final Path CHART = Path.of("..", "deploy", "helm", "kinference");
  private static final Pattern ACTION = Pattern.compile("\\{\\{-?\\s*(.*?)\\s*-?}}");
  private static final Pattern REFERENCE = Pattern.compile("\\.(Values|Release|Chart)((?:\\.[A-Za-z0-9_]+)+)");

  /** Every rendered document, by "Kind/name". */
  static Map<String, JsonNode> render(String release, String namespace) throws IOException {
    Load load = new Load(LoadSettings.builder().build());
    @SuppressWarnings("unchecked")
    Map<String, Object> values = (Map<String, Object>) load.loadFromString(
        Files.readString(CHART.resolve("values.yaml")));
    @SuppressWarnings("unchecked")
    Map<String, Object> chart = (Map<String, Object>) load.loadFromString(
        Files.readString(CHART.resolve("Chart.yaml")));
    Map<String, JsonNode> out = new TreeMap<>();
    List<Path> templates;
    try (Stream<Path> s = Files.list(CHART.resolve("templates"))) {
      templates = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    for (Path t : templates) {
      String rendered = substitute(Files.readString(t), t.getFileName().toString(), values, chart, release,
          namespace);
      for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(rendered)) {
        if (doc == null) {
          continue;
        }
        JsonNode node = ApiClient.JSON.valueToTree(doc);
        String key = node.path("kind").asText() + "/" + node.path("metadata").path("name").asText();
        assertThat(out.put(key, node)).as("duplicate %s", key).isNull();
      }
    }
    return out;
  }

  private static String substitute(String text, String file, Map<String, Object> values, Map<String, Object> chart,
      String release, String namespace) {
    Matcher m = ACTION.matcher(text);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      String expr = m.group(1);
      Matcher ref = REFERENCE.matcher(expr);
      assertThat(ref.matches()).as("%s: only plain references are allowed, found {{ %s }}", file, expr).isTrue();
      String[] path = ref.group(2).substring(1).split("\\.");
      Object v = switch (ref.group(1)) {
        case "Release" -> switch (path[0]) {
          case "Name" -> release;
          case "Namespace" -> namespace;
          default -> null;
        };
        case "Chart" -> path[0].equals("AppVersion") ? chart.get("appVersion") : chart.get(path[0].toLowerCase(java.util.Locale.ROOT));
        default -> lookup(values, path);
      };
      assertThat(v).as("%s: {{ %s }} has no value", file, expr).isNotNull();
      assertThat(v).as("%s: {{ %s }} must be a scalar", file, expr).isNotInstanceOfAny(Map.class, List.class);
      m.appendReplacement(sb, Matcher.quoteReplacement(String.valueOf(v)));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  @SuppressWarnings("unchecked")
  private static Object lookup(Map<String, Object> values, String[] path) {
    Object cur = values;
    for (String p : path) {
      if (!(cur instanceof Map<?, ?> map)) {
        return null;
      }
      cur = ((Map<String, Object>) map).get(p);
    }
    return cur;
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
        "--policy-namespace", "llm", "--index", "precise");
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
      JsonNode n = ApiClient.JSON.valueToTree(doc);
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
}
