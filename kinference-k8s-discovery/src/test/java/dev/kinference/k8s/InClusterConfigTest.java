package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KubernetesConfig#inCluster} with the environment and the service-account mount given by the test, the
 * token file's rotation rules ({@link TokenSource.FromFile} on a test clock), and {@link KubernetesConfig#autodetect}
 * choosing between a pod and a kubeconfig.
 */
class InClusterConfigTest {

  private static TestPki.Issued ca;

  @TempDir
  Path dir;

  private Path sa;

  @BeforeAll
  static void makeCa() {
    ca = TestPki.ca("kubernetes");
  }

  @BeforeEach
  void mountServiceAccount() throws Exception {
    sa = Files.createDirectories(dir.resolve("serviceaccount"));
    Files.writeString(sa.resolve("token"), "pod-token\n");
    Files.write(sa.resolve("ca.crt"), ca.certificatePemBytes());
    Files.writeString(sa.resolve("namespace"), "llm");
  }

  private static Map<String, String> pod(String host, String port) {
    return Map.of("KUBERNETES_SERVICE_HOST", host, "KUBERNETES_SERVICE_PORT", port);
  }

  @Test
  void theServiceHostAndPortTheMountedCaTokenAndNamespaceMakeTheConfiguration() {
    KubernetesConfig config = KubernetesConfig.inCluster(pod("10.96.0.1", "443"), sa);
    assertThat(config.server()).isEqualTo(URI.create("https://10.96.0.1:443"));
    assertThat(config.caPem()).isEqualTo(ca.certificatePemBytes());
    assertThat(config.namespace()).isEqualTo("llm");
    assertThat(config.insecureSkipTlsVerify()).isFalse();
    assertThat(config.tokenSource()).isInstanceOfSatisfying(TokenSource.FromFile.class,
        f -> assertThat(f.file()).isEqualTo(sa.resolve("token")));
    assertThat(config.tokenSource().token(false)).isEqualTo("pod-token");
    assertThat(config.toString()).doesNotContain("pod-token");
  }

  @Test
  void thePortDefaultsTo443AndAnIpv6HostIsBracketed() {
    assertThat(KubernetesConfig.inCluster(Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1"), sa).server())
        .isEqualTo(URI.create("https://10.96.0.1:443"));
    KubernetesConfig v6 = KubernetesConfig.inCluster(pod("fd00:10:96::1", "6443"), sa);
    assertThat(v6.server()).isEqualTo(URI.create("https://[fd00:10:96::1]:6443"));
    assertThat(v6.server().getHost()).isEqualTo("[fd00:10:96::1]");
  }

  @Test
  void withoutACaBundleOrNamespaceFileTheJdkRootsAndNoNamespaceAreUsed() throws Exception {
    Files.delete(sa.resolve("ca.crt"));
    Files.writeString(sa.resolve("namespace"), "  \n");
    KubernetesConfig config = KubernetesConfig.inCluster(pod("10.96.0.1", "443"), sa);
    assertThat(config.caPem()).isNull();
    assertThat(config.namespace()).isNull();
  }

  @Test
  void outsideAPodItSaysSo() {
    assertThatThrownBy(() -> KubernetesConfig.inCluster(Map.of(), sa))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("not running in a pod: KUBERNETES_SERVICE_HOST is not set");
    assertThatThrownBy(() -> KubernetesConfig.inCluster(pod(" ", "443"), sa))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("KUBERNETES_SERVICE_HOST is not set");
  }

  @Test
  void withoutAMountedTokenItSuggestsTheLikelyCause() throws Exception {
    Files.delete(sa.resolve("token"));
    assertThatThrownBy(() -> KubernetesConfig.inCluster(pod("10.96.0.1", "443"), sa))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no service-account token at " + sa.resolve("token")
            + " (is automountServiceAccountToken false?)");
  }

  /** Regression: a corrupt ca.crt gave "certificate authority is not a PEM certificate bundle", naming no file. */
  @Test
  void aCorruptMountedCaBundleIsRejectedNamingTheFile() throws Exception {
    Files.writeString(sa.resolve("ca.crt"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    assertThatThrownBy(() -> KubernetesConfig.inCluster(pod("10.96.0.1", "443"), sa))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(sa.resolve("ca.crt") + ": certificate authority ");
  }

  // --- the token file's rotation rules ---

  @Test
  void aTokenFileIsReadOnceAMinuteAndWhenTheServerRefusedTheToken() throws Exception {
    Path token = sa.resolve("token");
    AtomicLong now = new AtomicLong(123_456_789L);
    TokenSource.FromFile source = new TokenSource.FromFile(token, now::get);
    assertThat(source.token(false)).isEqualTo("pod-token");

    Files.writeString(token, "rotated-1");
    now.addAndGet(TokenSource.FILE_REFRESH.minusNanos(1).toNanos());
    assertThat(source.token(false)).as("within the minute: cached").isEqualTo("pod-token");
    now.addAndGet(1);
    assertThat(source.token(false)).as("a minute later: read again").isEqualTo("rotated-1");

    Files.writeString(token, "rotated-2");
    assertThat(source.token(false)).isEqualTo("rotated-1");
    assertThat(source.token(true)).as("after a 401: read again at once").isEqualTo("rotated-2");
    assertThat(TokenSource.FILE_REFRESH).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void aTokenFileBrieflyEmptyOrMissingDuringARotationKeepsThePreviousToken() throws Exception {
    Path token = sa.resolve("token");
    TokenSource.FromFile source = new TokenSource.FromFile(token, System::nanoTime);
    assertThat(source.token(false)).isEqualTo("pod-token");
    Files.writeString(token, "");
    assertThat(source.token(true)).isEqualTo("pod-token");
    Files.delete(token);
    assertThat(source.token(true)).isEqualTo("pod-token");
    Files.writeString(token, "new-token");
    assertThat(source.token(true)).isEqualTo("new-token");
  }

  @Test
  void aTokenFileThatIsEmptyOrMissingFromTheStartIsAnError() throws Exception {
    Path empty = dir.resolve("empty-token");
    Files.writeString(empty, "\n");
    assertThatThrownBy(() -> new TokenSource.FromFile(empty, System::nanoTime).token(false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("token file " + empty + " is empty");
    Path missing = dir.resolve("missing-token");
    assertThatThrownBy(() -> new TokenSource.FromFile(missing, System::nanoTime).token(false))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessage("cannot read token file " + missing);
  }

  // --- autodetect ---

  private Path kubeconfigAt(Path file, String server) throws Exception {
    Files.createDirectories(file.getParent());
    Files.writeString(file, """
        current-context: dev
        clusters:
        - name: local
          cluster: {server: "%s", insecure-skip-tls-verify: true}
        users:
        - name: dev
          user: {token: dev-token}
        contexts:
        - name: dev
          context: {cluster: local, user: dev}
        """.formatted(server));
    return file;
  }

  @Test
  void autodetectPrefersThePodsServiceAccount() throws Exception {
    Path home = dir.resolve("home");
    kubeconfigAt(home.resolve(".kube/config"), "https://127.0.0.1:6443");
    KubernetesConfig config = KubernetesConfig.autodetect(pod("10.96.0.1", "443"), sa, home);
    assertThat(config.server()).isEqualTo(URI.create("https://10.96.0.1:443"));
    assertThat(config.namespace()).isEqualTo("llm");
  }

  @Test
  void autodetectOutsideAPodReadsTheFirstKubeconfigOfTheKubeconfigVariable() throws Exception {
    Path first = kubeconfigAt(dir.resolve("a/config"), "https://127.0.0.1:1111");
    Path second = kubeconfigAt(dir.resolve("b/config"), "https://127.0.0.1:2222");
    Path home = dir.resolve("home");
    kubeconfigAt(home.resolve(".kube/config"), "https://127.0.0.1:3333");
    Map<String, String> env = Map.of("KUBECONFIG", first + File.pathSeparator + second);
    assertThat(KubernetesConfig.autodetect(env, sa, home).server()).isEqualTo(URI.create("https://127.0.0.1:1111"));
    // A host variable without a mounted token is not a pod (a developer's shell may export it).
    Files.delete(sa.resolve("token"));
    Map<String, String> shell = Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBECONFIG", second.toString());
    assertThat(KubernetesConfig.autodetect(shell, sa, home).server()).isEqualTo(URI.create("https://127.0.0.1:2222"));
  }

  @Test
  void autodetectFallsBackToTheHomeKubeconfig() throws Exception {
    Path home = dir.resolve("home");
    kubeconfigAt(home.resolve(".kube/config"), "https://127.0.0.1:3333");
    KubernetesConfig config = KubernetesConfig.autodetect(Map.of(), sa, home);
    assertThat(config.server()).isEqualTo(URI.create("https://127.0.0.1:3333"));
    assertThat(config.tokenSource().token(false)).isEqualTo("dev-token");
    assertThat(KubernetesConfig.autodetect(Map.of("KUBECONFIG", " "), sa, home).server())
        .isEqualTo(URI.create("https://127.0.0.1:3333"));
  }

  /** Regression: with neither a pod nor a kubeconfig, autodetect said only "cannot read /root/.kube/config". */
  @Test
  void autodetectWithNeitherAPodNorAKubeconfigSaysWhatItLookedFor() {
    Path home = dir.resolve("empty-home");
    assertThatThrownBy(() -> KubernetesConfig.autodetect(Map.of(), sa, home))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no Kubernetes configuration found: not in a pod (KUBERNETES_SERVICE_HOST is not set), "
            + "and no kubeconfig at " + home.resolve(".kube/config") + " ($KUBECONFIG is not set)");
    Path missing = dir.resolve("nowhere/config");
    assertThatThrownBy(() -> KubernetesConfig.autodetect(Map.of("KUBECONFIG", missing.toString(),
        "KUBERNETES_SERVICE_HOST", "10.96.0.1"), dir.resolve("no-mount"), home))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no Kubernetes configuration found: not in a pod (KUBERNETES_SERVICE_HOST is set but there is "
            + "no service-account token at " + dir.resolve("no-mount/token") + "), and no kubeconfig at " + missing
            + " (from $KUBECONFIG)");
  }
}
