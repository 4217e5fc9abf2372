package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TLS and authentication against a real HTTPS server on 127.0.0.1 with certificates made by the test: which
 * certificate authorities are trusted, {@code insecure-skip-tls-verify}, client certificates in every key form,
 * bearer tokens from files (rotation after a minute and after a 401), and the in-cluster and kubeconfig
 * configurations end to end.
 */
class KubernetesTlsTest {

  private static final String NAMESPACES = "/api/v1/namespaces";

  private static TestPki.Issued clusterCa;
  private static TestPki.Issued otherCa;
  private static TestPki.Issued serverCert;
  private static TestPki.Issued clientCa;

  private TlsApiServer server;

  @TempDir
  Path dir;

  @BeforeAll
  static void makePki() {
    clusterCa = TestPki.ca("kubernetes");
    otherCa = TestPki.ca("someone-else");
    serverCert = TestPki.server(clusterCa);
    clientCa();
  }

  @AfterEach
  void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private TlsApiServer start(TestPki.Issued certificate) throws Exception {
    server = new TlsApiServer(certificate, clientCa);
    return server;
  }

  private static JsonNode get(KubernetesConfig config) throws IOException, InterruptedException {
    try (ApiClient client = new ApiClient(config)) {
      return client.get(NAMESPACES, Map.of());
    }
  }

  private KubernetesConfig.Builder trusting(TestPki.Issued ca) {
    return KubernetesConfig.builder(server.uri()).certificateAuthority(ca.certificatePemBytes());
  }

  // --- server verification ---

  @Test
  void aServerSignedByTheConfiguredCaIsTrusted() throws Exception {
    start(serverCert);
    JsonNode answer = get(trusting(clusterCa).token("t").build());
    assertThat(answer.path("kind").asText()).isEqualTo("NamespaceList");
    assertThat(server.seen).singleElement().satisfies(s -> {
      assertThat(s.path()).isEqualTo(NAMESPACES);
      assertThat(s.authorization()).isEqualTo("Bearer t");
      assertThat(s.clientSubject()).isEmpty();
    });
  }

  @Test
  void everyCertificateOfACaBundleIsTrusted() throws Exception {
    start(serverCert);
    // A ca.crt during a CA rotation holds the old and the new CA; the server may be signed by either.
    KubernetesConfig config = KubernetesConfig.builder(server.uri())
        .certificateAuthority(TestPki.bundle(List.of(otherCa, clusterCa))).build();
    assertThat(get(config).path("kind").asText()).isEqualTo("NamespaceList");
  }

  /** Regression: the JDK's "PKIX path building failed" named neither the server nor the trusted authority. */
  @Test
  void anUntrustedServerCertificateIsReportedWithTheServerAndTheTrustedAuthority() throws Exception {
    start(serverCert);
    assertThatThrownBy(() -> get(trusting(otherCa).build()))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageStartingWith("cannot connect securely to the API server " + server.uri()
            + ": its certificate is not signed by the configured certificate authority (CN=someone-else)")
        .hasMessageContaining("PKIX path building failed");
    assertThat(server.seen).isEmpty();
  }

  @Test
  void withoutACaOnlyTheJdksTrustedRootsAreAccepted() throws Exception {
    start(serverCert);
    assertThatThrownBy(() -> get(KubernetesConfig.builder(server.uri()).build()))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageStartingWith("cannot connect securely to the API server " + server.uri()
            + ": its certificate is not signed by any of the JDK's trusted root certificates, and no certificate "
            + "authority is configured");
    assertThat(server.seen).isEmpty();
  }

  @Test
  void aTrustedCertificateForAnotherHostIsRefused() throws Exception {
    start(TestPki.serverForAnotherHost(clusterCa));
    assertThatThrownBy(() -> get(trusting(clusterCa).build()))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageStartingWith("cannot connect securely to the API server " + server.uri()
            + ": its certificate is not valid for host 127.0.0.1");
    assertThat(server.seen).isEmpty();
  }

  @Test
  void aClientCertificateFromAnotherAuthorityIsNotPresentedAndTheRequestIsAnonymous() throws Exception {
    start(serverCert);
    // The server names the client CAs it accepts; the JDK offers no certificate outside them, like Go's client.
    server.answer(s -> s.clientSubject().isEmpty() ? TlsApiServer.Answer.unauthorized() : TlsApiServer.Answer.ok());
    TestPki.Issued stranger = TestPki.client(otherCa, "mallory", TestPki.ecKeys());
    KubernetesConfig config = trusting(clusterCa)
        .clientCertificate(stranger.certificatePemBytes(), stranger.pkcs8Pem().getBytes(StandardCharsets.US_ASCII))
        .build();
    assertThatThrownBy(() -> get(config))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(401))
        .hasMessageContaining("401 Unauthorized");
    assertThat(server.seen).isNotEmpty().allSatisfy(s -> assertThat(s.clientSubject()).isEmpty());
  }

  @Test
  void aServerRequiringAClientCertificateSaysSoWhenNoneIsConfigured() throws Exception {
    server = new TlsApiServer(serverCert, clientCa, true);
    assertThatThrownBy(() -> get(trusting(clusterCa).token("t").build()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("cannot connect securely to the API server " + server.uri()
            + ": it requires a client certificate");
    assertThat(server.seen).isEmpty();
  }

  @Test
  void aWatchOverUntrustedTlsFailsWithTheSameExplanation() throws Exception {
    start(serverCert);
    try (ApiClient client = new ApiClient(trusting(otherCa).build());
        ApiClient.WatchStream stream = client.watch(NAMESPACES, Map.of("watch", "true"),
            WatchTransport.HTTP_STREAM, false)) {
      assertThatThrownBy(() -> stream.next(Duration.ofSeconds(30)))
          .isInstanceOf(SSLHandshakeException.class)
          .hasMessageContaining("not signed by the configured certificate authority (CN=someone-else)");
    }
  }

  @Test
  void anExpiredServerCertificateIsReportedAsExpired() throws Exception {
    start(TestPki.expiredServer(clusterCa));
    assertThatThrownBy(() -> get(trusting(clusterCa).build()))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageStartingWith("cannot connect securely to the API server " + server.uri()
            + ": its certificate has expired or is not yet valid");
  }

  @Test
  void insecureSkipTlsVerifyAcceptsAnUntrustedCertificateForAnotherHost() throws Exception {
    start(TestPki.serverForAnotherHost(otherCa));
    KubernetesConfig config = KubernetesConfig.builder(server.uri()).insecureSkipTlsVerify(true).token("t").build();
    assertThat(get(config).path("kind").asText()).isEqualTo("NamespaceList");
    assertThat(server.authorizations()).containsExactly("Bearer t");
  }

  // --- client certificates ---

  static Stream<Arguments> clientKeys() {
    var rsa = TestPki.client(clientCa(), "alice-rsa", TestPki.rsaKeys());
    var ec = TestPki.client(clientCa(), "alice-ec", TestPki.ecKeys());
    return Stream.of(
        Arguments.of("PKCS#8 (EC)", ec, ec.pkcs8Pem()),
        Arguments.of("PKCS#8 (RSA)", rsa, rsa.pkcs8Pem()),
        Arguments.of("PKCS#1", rsa, rsa.pkcs1Pem()),
        Arguments.of("SEC1", ec, ec.sec1Pem()));
  }

  /** Made on first use: whether the method source runs before {@link #makePki} is JUnit's business. */
  private static synchronized TestPki.Issued clientCa() {
    if (clientCa == null) {
      clientCa = TestPki.ca("kubernetes-client-ca");
    }
    return clientCa;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("clientKeys")
  void aClientCertificateIsPresentedWhateverItsKeyForm(String form, TestPki.Issued client, String keyPem)
      throws Exception {
    start(serverCert);
    KubernetesConfig config = trusting(clusterCa)
        .clientCertificate(client.certificatePemBytes(), keyPem.getBytes(StandardCharsets.US_ASCII)).build();
    assertThat(get(config).path("kind").asText()).isEqualTo("NamespaceList");
    assertThat(server.seen).singleElement().satisfies(s -> {
      assertThat(s.clientSubject()).isEqualTo(client.subject());
      assertThat(s.authorization()).isEmpty();
    });
  }

  // --- bearer tokens ---

  /** The server accepts only the token currently in {@code file}, like an API server after a rotation. */
  private void acceptOnlyTheTokenIn(Path file) {
    server.answer(s -> {
      try {
        String current = Files.readString(file).strip();
        return s.authorization().equals("Bearer " + current) ? TlsApiServer.Answer.ok()
            : TlsApiServer.Answer.unauthorized();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  @Test
  void aRotatedTokenFileIsReadAgainAfterA401() throws Exception {
    start(serverCert);
    Path token = dir.resolve("token");
    Files.writeString(token, "first-token\n");
    acceptOnlyTheTokenIn(token);
    try (ApiClient client = new ApiClient(trusting(clusterCa).tokenFile(token).build())) {
      client.get(NAMESPACES, Map.of());
      Files.writeString(token, "second-token\n"); // the kubelet rotates the projected token in place
      client.get(NAMESPACES, Map.of());
      client.get(NAMESPACES, Map.of());
    }
    assertThat(server.authorizations()).containsExactly("Bearer first-token", "Bearer first-token",
        "Bearer second-token", "Bearer second-token");
  }

  @Test
  void aRefusedTokenThatDidNotChangeGivesTheServersMessageAfterOneRetry() throws Exception {
    start(serverCert);
    server.answer(s -> TlsApiServer.Answer.unauthorized());
    Path token = dir.resolve("token");
    Files.writeString(token, "revoked-token");
    try (ApiClient client = new ApiClient(trusting(clusterCa).tokenFile(token).build())) {
      assertThatThrownBy(() -> client.get(NAMESPACES, Map.of()))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(401))
          .hasMessageContaining("401 Unauthorized");
    }
    assertThat(server.seen).hasSize(2);
  }

  @Test
  void aTokenFileIsReadAgainEveryMinuteWithoutA401() throws Exception {
    start(serverCert);
    Path token = dir.resolve("token");
    Files.writeString(token, "first-token");
    AtomicLong nanos = new AtomicLong();
    KubernetesConfig config = trusting(clusterCa)
        .tokenSource(new TokenSource.FromFile(token, nanos::get)).build();
    try (ApiClient client = new ApiClient(config)) {
      client.get(NAMESPACES, Map.of());
      Files.writeString(token, "second-token");
      nanos.addAndGet(Duration.ofSeconds(59).toNanos());
      client.get(NAMESPACES, Map.of()); // the server still accepts the old token: no reason to re-read yet
      nanos.addAndGet(Duration.ofSeconds(1).toNanos());
      client.get(NAMESPACES, Map.of());
    }
    assertThat(server.authorizations()).containsExactly("Bearer first-token", "Bearer first-token",
        "Bearer second-token");
  }

  // --- whole configurations ---

  @Test
  void inClusterConfigurationConnectsWithTheMountedCaAndTokenAndFollowsRotation() throws Exception {
    start(serverCert);
    Path sa = Files.createDirectories(dir.resolve("serviceaccount"));
    Files.write(sa.resolve("ca.crt"), clusterCa.certificatePemBytes());
    Files.writeString(sa.resolve("token"), "pod-token-1");
    Files.writeString(sa.resolve("namespace"), "llm\n");
    KubernetesConfig config = KubernetesConfig.inCluster(Map.of("KUBERNETES_SERVICE_HOST", "127.0.0.1",
        "KUBERNETES_SERVICE_PORT", Integer.toString(server.uri().getPort())), sa);
    assertThat(config.server()).isEqualTo(server.uri());
    assertThat(config.namespace()).isEqualTo("llm");
    acceptOnlyTheTokenIn(sa.resolve("token"));
    try (ApiClient client = new ApiClient(config)) {
      client.get(NAMESPACES, Map.of());
      Files.writeString(sa.resolve("token"), "pod-token-2");
      client.get(NAMESPACES, Map.of());
    }
    assertThat(server.authorizations()).containsExactly("Bearer pod-token-1", "Bearer pod-token-1",
        "Bearer pod-token-2");
  }

  @Test
  void aKubeconfigWithCaFileAndClientCertificateDataConnects() throws Exception {
    start(serverCert);
    TestPki.Issued client = TestPki.client(clientCa, "dev", TestPki.ecKeys());
    Files.write(dir.resolve("ca.crt"), clusterCa.certificatePemBytes());
    Path kubeconfig = dir.resolve("config");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        current-context: dev
        clusters:
        - name: local
          cluster:
            server: %s
            certificate-authority: ca.crt
        users:
        - name: dev
          user:
            client-certificate-data: %s
            client-key-data: %s
        contexts:
        - name: dev
          context: {cluster: local, user: dev, namespace: llm}
        """.formatted(server.uri(), TestPki.base64(client.certificatePem()), TestPki.base64(client.sec1Pem())));
    KubernetesConfig config = KubernetesConfig.fromKubeconfig(kubeconfig);
    assertThat(get(config).path("kind").asText()).isEqualTo("NamespaceList");
    assertThat(server.seen).singleElement().extracting(TlsApiServer.Seen::clientSubject)
        .isEqualTo(client.subject());
  }
}
