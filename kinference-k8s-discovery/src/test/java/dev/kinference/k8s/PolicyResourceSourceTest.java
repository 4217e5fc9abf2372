package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.model.Resource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The five policy kinds as custom resources in the mock API server (CRUD mode, with the CRDs of
 * {@code deploy/crds} installed): valid objects make the configuration, invalid ones are reported with a Warning
 * Event and left out.
 */
class PolicyResourceSourceTest {

  static final Path CRDS = Path.of("..", "deploy", "crds");

  private ApiServerFixture api;
  private PolicyResourceSource source;
  private final LinkedBlockingQueue<PolicyConfig> configs = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() throws Exception {
    api = new ApiServerFixture();
    try (Stream<Path> files = Files.list(CRDS)) {
      for (Path crd : files.sorted().toList()) {
        api.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml(Files.readString(crd)));
      }
    }
  }

  @AfterEach
  void stop() throws Exception {
    if (source != null) {
      source.close();
    }
    api.close();
  }

  static JsonNode yaml(String text) {
    Object o = new Load(LoadSettings.builder().build()).loadFromString(text);
    return EndpointMapper.JSON.valueToTree(o);
  }

  private static String path(String plural) {
    return "/apis/kinference.dev/v1alpha1/namespaces/" + NS + "/" + plural;
  }

  private PolicyConfig await(String what, Predicate<PolicyConfig> matches) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < deadline) {
      PolicyConfig c = configs.poll(100, TimeUnit.MILLISECONDS);
      if (c != null && matches.test(c)) {
        return c;
      }
    }
    return fail("no configuration with " + what + "; rejected: " + source.rejected());
  }

  private static List<String> refs(PolicyConfig c) {
    return c.resources().stream().map(Resource::ref).sorted().toList();
  }

  private static final String POOL = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: qwen3, namespace: llm}
      spec:
        model: Qwen/Qwen3-8B
        selector: {matchLabels: {app: vllm}}
        blockSize: 16
      """;

  private static final String ALIAS = """
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: chat, namespace: llm}
      spec:
        targets: [{pool: qwen3}]
      """;

  private static final String TENANT = """
      apiVersion: kinference.dev/v1alpha1
      kind: Tenant
      metadata: {name: search, namespace: llm}
      spec:
        apiKeys: [{name: prod, sha256: d2fa5c9cf5a7135d0d1df997c1e3bcdc2ad0e04dad1b644dfa9be40fc1703a80}]
        models: [chat]
        limits: {requestsPerMinute: 600}
      """;

  private static final String POLICY = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePolicy
      metadata: {name: default, namespace: llm}
      spec:
        rules:
          - name: batch-waits
            match: {trafficClass: batch}
            action: {admitBelow: {queueDepth: 2}, retryAfter: 30s}
      """;

  /** Fails the Java checks: a block size of 0 and a misspelt field. */
  private static final String BAD_POOL = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: broken, namespace: llm}
      spec:
        model: Qwen/Qwen3-32B
        selector: {matchLabels: {app: big}}
        blockSize: 0
        capacty: {replicas: 2}
      """;

  /** Valid alone, but names a pool that does not exist. */
  private static final String DANGLING_ALIAS = """
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: big, namespace: llm}
      spec:
        targets: [{pool: nowhere}]
      """;

  @Test
  void validObjectsMakeTheConfigurationAndInvalidOnesAreReportedAndSkipped() throws Exception {
    api.create(path("inferencepools"), yaml(POOL));
    api.create(path("modelaliases"), yaml(ALIAS));
    api.create(path("tenants"), yaml(TENANT));
    api.create(path("inferencepolicies"), yaml(POLICY));
    api.create(path("inferencepools"), yaml(BAD_POOL));
    api.create(path("modelaliases"), yaml(DANGLING_ALIAS));

    source = PolicyResourceSource.builder().config(api.config()).namespace(NS).build();
    source.start(configs::add);
    PolicyConfig first = await("the four valid objects", c -> c.resources().size() == 4);
    assertThat(refs(first)).containsExactly("InferencePolicy/default", "InferencePool/qwen3", "ModelAlias/chat",
        "Tenant/search");
    assertThat(first.pool("qwen3").spec().blockSize()).isEqualTo(16);
    assertThat(source.rejected()).extracting(PolicyResourceSource.Rejected::name)
        .containsExactlyInAnyOrder("broken", "big");
    PolicyResourceSource.Rejected broken = source.rejected().stream().filter(r -> r.name().equals("broken"))
        .findFirst().orElseThrow();
    assertThat(String.join("\n", broken.problems())).contains("blockSize").contains("capacty");

    // Each invalid object got a Warning Event naming it.
    JsonNode events = awaitEvents(2);
    assertThat(events.findValuesAsText("name")).contains("broken", "big");
    for (JsonNode e : events.path("items")) {
      assertThat(e.path("type").asText()).isEqualTo("Warning");
      assertThat(e.path("reason").asText()).isEqualTo("InvalidPolicy");
      assertThat(e.path("involvedObject").path("apiVersion").asText()).isEqualTo("kinference.dev/v1alpha1");
    }

    // Fixing the pool brings it in; the dangling alias stays out until its pool exists.
    api.replace(path("inferencepools"), yaml(BAD_POOL.replace("blockSize: 0", "blockSize: 32")
        .replace("capacty", "capacity")));
    PolicyConfig fixed = await("the fixed pool", c -> c.pool("broken") != null);
    assertThat(fixed.alias("big")).isNull();
    api.replace(path("modelaliases"), yaml(DANGLING_ALIAS.replace("nowhere", "broken")));
    await("the alias", c -> c.alias("big") != null);

    // Deletions leave the configuration.
    api.delete(path("tenants"), "search");
    PolicyConfig after = await("no tenant", c -> c.tenants().isEmpty());
    assertThat(after.resources()).hasSize(5);
    assertThat(source.rejected()).isEmpty();
  }

  private JsonNode awaitEvents(int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    var http = java.net.http.HttpClient.newHttpClient();
    try {
      while (true) {
        var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
            "http://127.0.0.1:" + api.server.getPort() + "/api/v1/namespaces/" + NS + "/events")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        JsonNode list = EndpointMapper.JSON.readTree(r.body());
        if (list.path("items").size() >= n || System.nanoTime() > deadline) {
          return list;
        }
        Thread.sleep(50);
      }
    } finally {
      http.close();
    }
  }
}
