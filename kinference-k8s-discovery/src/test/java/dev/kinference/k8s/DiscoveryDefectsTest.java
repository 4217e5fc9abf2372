package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.SLICES;
import static dev.kinference.k8s.K8sObjects.at;
import static dev.kinference.k8s.K8sObjects.pod;
import static dev.kinference.k8s.K8sObjects.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.model.InferencePool;
import io.fabric8.kubernetes.client.Config;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One test per discovery defect found in the hand-written client, against the fabric8 mock API server in CRUD mode
 * (WebSocket watches) behind a {@link DropProxy}.
 */
class DiscoveryDefectsTest {

  @TempDir
  Path dir;

  private ApiServerFixture api;
  private KubernetesEndpointSource source;
  private final Deliveries deliveries = new Deliveries();

  @BeforeEach
  void startServer() throws Exception {
    api = new ApiServerFixture();
  }

  @AfterEach
  void stop() throws Exception {
    if (source != null) {
      source.close();
    }
    api.close();
  }

  private KubernetesEndpointSource.Builder sourceBuilder() {
    return KubernetesEndpointSource.builder().config(api.config()).namespace(NS).service("vllm");
  }

  private static ObjectNode unpooled(String name, String ip) {
    ObjectNode p = pod(name, ip, true, "qwen3");
    ObjectNode labels = (ObjectNode) p.get("metadata").get("labels");
    labels.remove(PodAnnotations.POOL);
    labels.put("app", "vllm-qwen3");
    return p;
  }

  @Test
  void aPoolsSelectorMatchesThePodsLabels() throws Exception {
    // Regression: pods labelled app: vllm-qwen3 got 429 "pool ... no members"; only kinference.dev/pool served.
    api.create(PODS, unpooled("vllm-a", "192.0.2.1"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
    source = sourceBuilder().build();
    source.start(deliveries);
    Endpoint a = deliveries.awaitIds("llm/vllm-a").get(0);
    assertThat(a.labels()).containsEntry("app", "vllm-qwen3").doesNotContainKey(PodAnnotations.POOL)
        .containsEntry(PodAnnotations.POD_LABEL, "vllm-a");

    PolicyConfig config = PolicyLoader.load("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: qwen3}
        spec:
          model: qwen3
          selector: {matchLabels: {app: vllm-qwen3}}
        """, "test").orThrow();
    InferencePool pool = Objects.requireNonNull(config.pool("qwen3"));
    // The rule of the policy engine's (package-private) Target.isMember: every matchLabels entry is a label.
    assertThat(a.labels()).as("the pool's selector matches the discovered pod")
        .containsAllEntriesOf(Objects.requireNonNull(pool.spec().selector()).matchLabels());
  }

  @Test
  void notReadyPodsBehindAPublishNotReadyAddressesServiceAreNotRouted() throws Exception {
    // With publishNotReadyAddresses every address is "ready"; "serving" is the pod's readiness.
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(PODS, pod("vllm-b", "192.0.2.2", false, "qwen3"));
    ObjectNode s = slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false)));
    ((ObjectNode) s.get("endpoints").get(1).get("conditions")).put("serving", false);
    api.create(SLICES, s);
    source = sourceBuilder().build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");

    // Without pods (no Ready condition to read), the slice's "serving" alone keeps b out.
    try (KubernetesEndpointSource slicesOnly = sourceBuilder().watchPods(false).defaultModel("qwen3").build()) {
      Deliveries d = new Deliveries();
      slicesOnly.start(d);
      d.awaitIds("llm/vllm-a");
    }

    // b becomes ready: it joins. Then it terminates while still serving (draining): it leaves.
    api.replace(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false))));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    ObjectNode draining = slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", false, true)));
    assertThat(draining.get("endpoints").get(1).get("conditions").get("serving").asBoolean()).isTrue();
    api.replace(SLICES, draining);
    deliveries.awaitIds("llm/vllm-a");
  }

  @Test
  void anAddressWhosePodNeverAppearsIsReportedAndJoinsWhenThePodAppears() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-ghost", true, false))));
    source = sourceBuilder().build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    assertThat(source.skipped()).containsEntry("llm/vllm-ghost", EndpointMapper.POD_UNKNOWN);

    api.create(PODS, pod("vllm-ghost", "192.0.2.2", true, "qwen3"));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-ghost");
    assertThat(source.skipped()).isEmpty();
  }

  private static ObjectNode v6(ObjectNode slice, Map<String, String> addresses) {
    slice.put("addressType", "IPv6");
    for (com.fasterxml.jackson.databind.JsonNode ep : slice.get("endpoints")) {
      ArrayNode a = (ArrayNode) ep.get("addresses");
      String v4 = a.get(0).asText();
      a.removeAll();
      a.add(addresses.get(v4));
    }
    return slice;
  }

  @Test
  void aDualStackPodKeepsOneAddressFamilyAndItsId() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    Map<String, String> six = Map.of("192.0.2.1", "2001:db8::1", "192.0.2.2", "2001:db8::2");
    Map<String, Object[]> both = Map.of("192.0.2.1", at("vllm-a", true, false), "192.0.2.2", at("vllm-b", true, false));
    // The IPv6 slice sorts (and is created) first.
    api.create(SLICES, v6(slice("a-v6", "vllm", both), six));
    api.create(SLICES, slice("b-v4", "vllm", both));
    source = sourceBuilder().build();
    source.start(deliveries);
    List<Endpoint> set = deliveries.await("both pods on IPv4", s -> s.size() == 2
        && s.stream().allMatch(e -> e.uri().getHost().startsWith("192.0.2.")));
    assertThat(set).extracting(Endpoint::id).containsExactly("llm/vllm-a", "llm/vllm-b");

    // The IPv6 slice changes (b leaves it): nothing flips; b still has its IPv4 address and its id.
    api.replace(SLICES, v6(slice("a-v6", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))), six));
    Thread.sleep(300);
    assertThat(source.currentEndpoints()).extracting(Endpoint::uri)
        .containsExactly(URI.create("http://192.0.2.1:8000"), URI.create("http://192.0.2.2:8000"));
    // The IPv4 slice loses a: a moves to its IPv6 address under the same id.
    api.replace(SLICES, slice("b-v4", "vllm", Map.of("192.0.2.2", at("vllm-b", true, false))));
    List<Endpoint> moved = deliveries.await("a on IPv6", s -> s.size() == 2
        && s.get(0).uri().equals(URI.create("http://[2001:db8::1]:8000")));
    assertThat(moved).extracting(Endpoint::id).containsExactly("llm/vllm-a", "llm/vllm-b");
  }

  /** The bound stated in ClusterConnection's and the README's terms: idleTimeout + checkInterval, then a relist. */
  @Test
  void aWatchThatGoesSilentIsNoticedWithinTheStatedTime() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
    Duration idle = Duration.ofSeconds(2);
    Duration check = Duration.ofMillis(250);
    source = sourceBuilder().idleTimeout(idle).checkInterval(check).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    Thread.sleep(300); // the watches are open

    api.proxy.silenceAll(); // no close, no reset: the connections just stop carrying anything
    long silencedAt = System.nanoTime();
    api.create(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    api.replace(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false))));
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    Duration took = Duration.ofNanos(System.nanoTime() - silencedAt);
    // idleTimeout + checkInterval, plus the time to list again on a loaded machine.
    assertThat(took).isLessThan(idle.plus(check).plusSeconds(3));
    assertThat(source.generations()).isGreaterThanOrEqualTo(2);
    // The endpoint that was there all along was never withdrawn meanwhile.
    assertThat(deliveries.count()).isEqualTo(2);
  }

  @Test
  void aRotatedClusterCaIsPickedUp() throws Exception {
    try (ApiServerFixture tls = new ApiServerFixture(true)) {
      tls.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
      tls.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
      // The CA file first holds a CA that did not sign the server's certificate (as after the server's rotation).
      Path ca = dir.resolve("ca.crt");
      Files.writeString(ca, TestPki.pem("CERTIFICATE", TestPki.encoded(TestPki.ca("old-ca").certificate())));
      Path kubeconfig = dir.resolve("config");
      Files.writeString(kubeconfig, """
          apiVersion: v1
          kind: Config
          current-context: test
          contexts: [{name: test, context: {cluster: c, user: u, namespace: llm}}]
          clusters: [{name: c, cluster: {server: "https://localhost:%d", certificate-authority: ca.crt}}]
          users: [{name: u, user: {token: test-token}}]
          """.formatted(tls.proxy.port()));
      source = KubernetesEndpointSource.builder().configs(KubernetesConfigs.kubeconfig(kubeconfig)).service("vllm")
          .idleTimeout(Duration.ofSeconds(30)).checkInterval(Duration.ofMillis(200)).build();
      source.start(deliveries);
      Thread.sleep(1000);
      assertThat(deliveries.count()).as("untrusted server: nothing listed").isZero();

      // The CA bundle is replaced with the one that signed the server's certificate.
      Files.writeString(ca, TestPki.pem("CERTIFICATE", TestPki.encoded(serverCertificate(tls.proxy.port()))));
      deliveries.awaitIds("llm/vllm-a");
      assertThat(source.generations()).isGreaterThanOrEqualTo(2);
      source.close();
    }
  }

  /** The certificate the mock server presents (self-signed), read without trusting it. */
  private static java.security.cert.X509Certificate serverCertificate(int port) throws Exception {
    javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
    java.security.cert.X509Certificate[][] seen = new java.security.cert.X509Certificate[1][];
    ctx.init(null, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509TrustManager() {
      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {
        seen[0] = chain;
      }

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return new java.security.cert.X509Certificate[0];
      }
    }}, null);
    try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ctx.getSocketFactory().createSocket("localhost", port)) {
      s.startHandshake();
    }
    java.security.cert.X509Certificate[] chain = Objects.requireNonNull(seen[0]);
    return chain[chain.length - 1];
  }

  @Test
  void severalKubeconfigFilesAreMergedAsKubectlDoes() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
    Path contexts = dir.resolve("contexts.yaml");
    Files.writeString(contexts, """
        apiVersion: v1
        kind: Config
        current-context: dev
        contexts: [{name: dev, context: {cluster: mock, user: tester, namespace: llm}}]
        """);
    Path clusters = dir.resolve("clusters.yaml");
    Files.writeString(clusters, """
        apiVersion: v1
        kind: Config
        current-context: elsewhere
        clusters: [{name: mock, cluster: {server: "%s"}}]
        users: [{name: tester, user: {token: merged-token}}]
        """.formatted(api.uri()));
    String previous = System.getProperty("kubeconfig");
    System.setProperty("kubeconfig", contexts + File.pathSeparator + clusters);
    Config config;
    try {
      config = KubernetesConfigs.autodetect(Duration.ofSeconds(10));
    } finally {
      if (previous == null) {
        System.clearProperty("kubeconfig");
      } else {
        System.setProperty("kubeconfig", previous);
      }
    }
    assertThat(config.getMasterUrl()).startsWith(api.uri().toString());
    assertThat(config.getNamespace()).isEqualTo(NS);
    source = KubernetesEndpointSource.builder().config(config).service("vllm").build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    assertThat(api.requestsTo(SLICES).stream().filter(r -> r.getMethod().equals("GET")).findFirst().orElseThrow()
        .getHeader("Authorization")).isEqualTo("Bearer merged-token");
  }

  @Test
  void aHangingExecCredentialPluginIsKilledAtTheTimeLimit() throws Exception {
    // Regression: the plugin's output was read to the end before waiting, so a plugin sleeping 70 s took 70 s.
    Path pidFile = dir.resolve("plugin.pid");
    Path plugin = dir.resolve("hang.sh");
    Files.writeString(plugin, "#!/bin/sh\necho $$ > '" + pidFile + "'\nexec sleep 70\n");
    Files.setPosixFilePermissions(plugin, PosixFilePermissions.fromString("rwx------"));
    Path kubeconfig = dir.resolve("config");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        current-context: test
        contexts: [{name: test, context: {cluster: c, user: u}}]
        clusters: [{name: c, cluster: {server: "%s"}}]
        users:
          - name: u
            user:
              exec:
                apiVersion: client.authentication.k8s.io/v1
                command: "%s"
                interactiveMode: Never
        """.formatted(api.uri(), plugin));
    long start = System.nanoTime();
    assertThatThrownBy(() -> KubernetesConfigs.kubeconfig(kubeconfig, Duration.ofSeconds(1)).get())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("took over PT1S")
        .hasMessageContaining("exec credential plugin");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    long pid = Long.parseLong(Files.readString(pidFile).strip());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("the plugin was killed")
        .isFalse();
  }

  @Test
  void anExecPluginThatFabric8RerunsAfterA401AndHangsIsKilled() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false))));
    // First run: a token. Every later run hangs.
    Path pidFile = dir.resolve("plugin.pid");
    Path ran = dir.resolve("ran");
    Path plugin = dir.resolve("token-then-hang.sh");
    Files.writeString(plugin, "#!/bin/sh\nif [ -f '" + ran + "' ]; then echo $$ > '" + pidFile + "'; exec sleep 70; fi\n"
        + "touch '" + ran + "'\n"
        + "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        + "\"status\":{\"token\":\"exec-token\"}}'\n");
    Files.setPosixFilePermissions(plugin, PosixFilePermissions.fromString("rwx------"));
    Path kubeconfig = dir.resolve("config");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        current-context: test
        contexts: [{name: test, context: {cluster: c, user: u, namespace: llm}}]
        clusters: [{name: c, cluster: {server: "%s"}}]
        users:
          - name: u
            user:
              exec:
                apiVersion: client.authentication.k8s.io/v1
                command: "%s"
                interactiveMode: Never
        """.formatted(api.uri(), plugin));
    // The first list is refused: fabric8 refreshes the token, which runs the plugin again.
    api.once(r -> r.getPath().startsWith(SLICES) && !ApiServerFixture.isWatch(r) && r.getMethod().equals("GET"),
        r -> ApiServerFixture.status(401, "Unauthorized"));
    source = KubernetesEndpointSource.builder().configs(KubernetesConfigs.kubeconfig(kubeconfig, Duration.ofSeconds(1)))
        .configTimeout(Duration.ofSeconds(1)).service("vllm").idleTimeout(Duration.ofSeconds(30))
        .checkInterval(Duration.ofMillis(200)).build();
    source.start(deliveries);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!Files.exists(pidFile) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(pidFile).as("fabric8 ran the plugin again after the 401").exists();
    Thread.sleep(50);
    long pid = Long.parseLong(Files.readString(pidFile).strip());
    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("the plugin was killed")
        .isFalse();
  }

  @Test
  void thePolicyNamespaceRoundTrips() throws Exception {
    String ns = "0-team-a";
    String pool = """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: %s, namespace: %s}
        spec:
          model: Qwen/Qwen3-8B
          selector: {matchLabels: {app: vllm}}
        """;
    api.create("/apis/kinference.dev/v1alpha1/namespaces/" + ns + "/inferencepools",
        PolicyResourceSourceTest.yaml(pool.formatted("mine", ns)));
    api.create("/apis/kinference.dev/v1alpha1/namespaces/other/inferencepools",
        PolicyResourceSourceTest.yaml(pool.formatted("theirs", "other")));
    LinkedBlockingQueue<PolicyConfig> configs = new LinkedBlockingQueue<>();
    try (PolicyResourceSource policies = PolicyResourceSource.builder().config(api.config()).namespace(ns)
        .recordEvents(false).build()) {
      policies.start(configs::add);
      PolicyConfig c = configs.poll(15, TimeUnit.SECONDS);
      assertThat(c).isNotNull();
      assertThat(c.pool("mine")).as("rejected: %s", policies.rejected()).isNotNull();
      assertThat(c.pool("theirs")).isNull();
      assertThat(policies.namespace()).isEqualTo(ns);
    }
    assertThat(api.requestsTo("/apis/kinference.dev/v1alpha1/namespaces/" + ns + "/inferencepools")).isNotEmpty();
    assertThatThrownBy(() -> PolicyResourceSource.builder().namespace("a/b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a/b");
  }
}
