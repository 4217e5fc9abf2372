package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateKey;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link KubernetesConfig#fromKubeconfig}: what each supported field becomes, which context is used, and the error
 * each missing or invalid field gives. Certificates and keys are made by the test; exec plugins are shell scripts
 * written by the test.
 */
class KubeconfigTest {

  private static TestPki.Issued ca;
  private static TestPki.Issued rsaClient;
  private static TestPki.Issued ecClient;

  @TempDir
  Path dir;

  @BeforeAll
  static void makePki() {
    ca = TestPki.ca("kubernetes");
    rsaClient = TestPki.client(ca, "alice", TestPki.rsaKeys());
    ecClient = TestPki.client(ca, "bob", TestPki.ecKeys());
  }

  private Path kubeconfig(String yaml) throws Exception {
    Path file = dir.resolve("config");
    Files.writeString(file, yaml);
    return file;
  }

  /** A kubeconfig with one cluster {@code local}, one user {@code dev} and one context {@code dev}. */
  private Path simple(String clusterFields, String userFields) throws Exception {
    return kubeconfig("""
        apiVersion: v1
        kind: Config
        current-context: dev
        clusters:
        - name: local
          cluster:
            server: https://127.0.0.1:6443
        %s
        users:
        - name: dev
          user:
        %s
        contexts:
        - name: dev
          context:
            cluster: local
            user: dev
        """.formatted(indent(clusterFields), indent(userFields)));
  }

  private static String indent(String fields) {
    return fields.lines().map(l -> "    " + l).reduce("", (a, l) -> a + l + "\n");
  }

  private static KubernetesConfig parse(Path file) {
    return KubernetesConfig.fromKubeconfig(file);
  }

  // --- what the fields become ---

  @Test
  void theCurrentContextGivesServerNamespaceCaDataAndToken() throws Exception {
    Path file = kubeconfig("""
        apiVersion: v1
        kind: Config
        current-context: dev
        clusters:
        - name: local
          cluster:
            server: https://127.0.0.1:6443/
            certificate-authority-data: %s
        users:
        - name: dev
          user:
            token: secret-token
        contexts:
        - name: dev
          context:
            cluster: local
            user: dev
            namespace: llm
        """.formatted(TestPki.base64(ca.certificatePem())));
    KubernetesConfig config = parse(file);
    assertThat(config.server()).isEqualTo(URI.create("https://127.0.0.1:6443"));
    assertThat(config.namespace()).isEqualTo("llm");
    assertThat(config.caPem()).isEqualTo(ca.certificatePemBytes());
    assertThat(config.insecureSkipTlsVerify()).isFalse();
    assertThat(config.tokenSource()).isEqualTo(new TokenSource.Fixed("secret-token"));
    assertThat(config.tokenSource().token(true)).isEqualTo("secret-token");
    assertThat(config.clientCertPem()).isNull();
    assertThat(config.toString()).doesNotContain("secret-token");
  }

  @Test
  void aNamedContextIsUsedInsteadOfTheCurrentOne() throws Exception {
    Path file = kubeconfig("""
        current-context: prod
        clusters:
        - name: prod
          cluster: {server: "https://prod.example:6443"}
        - name: kind
          cluster: {server: "https://127.0.0.1:41000", insecure-skip-tls-verify: true}
        users:
        - name: admin
          user: {token: prod-token}
        - name: kind-admin
          user: {token: kind-token}
        contexts:
        - name: prod
          context: {cluster: prod, user: admin, namespace: serving}
        - name: kind-dev
          context: {cluster: kind, user: kind-admin}
        """);
    KubernetesConfig current = KubernetesConfig.fromKubeconfig(file, null);
    assertThat(current.server()).isEqualTo(URI.create("https://prod.example:6443"));
    assertThat(current.namespace()).isEqualTo("serving");

    KubernetesConfig kind = KubernetesConfig.fromKubeconfig(file, "kind-dev");
    assertThat(kind.server()).isEqualTo(URI.create("https://127.0.0.1:41000"));
    assertThat(kind.namespace()).isNull();
    assertThat(kind.insecureSkipTlsVerify()).isTrue();
    assertThat(kind.tokenSource().token(false)).isEqualTo("kind-token");
  }

  @Test
  void relativeFilesAreResolvedAgainstTheKubeconfigsDirectory() throws Exception {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    Files.write(certs.resolve("ca.crt"), ca.certificatePemBytes());
    Files.writeString(certs.resolve("token"), "file-token\n");
    Path file = simple("certificate-authority: certs/ca.crt", "tokenFile: certs/token");
    KubernetesConfig config = parse(file);
    assertThat(config.caPem()).isEqualTo(ca.certificatePemBytes());
    assertThat(config.tokenSource()).isInstanceOfSatisfying(TokenSource.FromFile.class,
        f -> assertThat(f.file()).isEqualTo(certs.resolve("token")));
    assertThat(config.tokenSource().token(false)).isEqualTo("file-token");
  }

  @Test
  void anAbsoluteCaFileIsReadAsIs() throws Exception {
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere")).resolve("ca.pem");
    Files.write(elsewhere, ca.certificatePemBytes());
    assertThat(parse(simple("certificate-authority: " + elsewhere.toAbsolutePath(), "token: t")).caPem())
        .isEqualTo(ca.certificatePemBytes());
  }

  @Test
  void insecureSkipTlsVerifyWinsOverACertificateAuthority() throws Exception {
    // kubectl users flip insecure-skip-tls-verify on without deleting the CA; the intent is "do not verify".
    KubernetesConfig config = parse(simple("""
        insecure-skip-tls-verify: true
        certificate-authority-data: %s""".formatted(TestPki.base64(ca.certificatePem())), "token: t"));
    assertThat(config.insecureSkipTlsVerify()).isTrue();
    assertThat(config.caPem()).isNull();
  }

  @Test
  void aTokenTakesPrecedenceOverATokenFile() throws Exception {
    KubernetesConfig config = parse(simple("", """
        token: inline
        tokenFile: does-not-matter"""));
    assertThat(config.tokenSource()).isEqualTo(new TokenSource.Fixed("inline"));
  }

  @Test
  void aUserWithNothingAuthenticatesWithNothing() throws Exception {
    Path file = kubeconfig("""
        current-context: anon
        clusters:
        - name: local
          cluster: {server: "http://127.0.0.1:8080"}
        contexts:
        - name: anon
          context: {cluster: local}
        """);
    KubernetesConfig config = parse(file);
    assertThat(config.server()).isEqualTo(URI.create("http://127.0.0.1:8080"));
    assertThat(config.tokenSource()).isNull();
    assertThat(config.clientCertPem()).isNull();
  }

  static Stream<Arguments> keyForms() {
    return Stream.of(
        Arguments.of("PKCS#8 RSA", "rsa"), Arguments.of("PKCS#8 EC", "ec"),
        Arguments.of("PKCS#1", "pkcs1"), Arguments.of("SEC1", "sec1"));
  }

  private static TestPki.Issued client(String form) {
    return form.equals("rsa") || form.equals("pkcs1") ? rsaClient : ecClient;
  }

  private static String key(String form) {
    return switch (form) {
      case "rsa", "ec" -> client(form).pkcs8Pem();
      case "pkcs1" -> rsaClient.pkcs1Pem();
      case "sec1" -> ecClient.sec1Pem();
      default -> throw new IllegalArgumentException(form);
    };
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("keyForms")
  void clientCertificateAndKeyDataInEveryKeyForm(String name, String form) throws Exception {
    TestPki.Issued client = client(form);
    KubernetesConfig config = parse(simple("", """
        client-certificate-data: %s
        client-key-data: %s""".formatted(TestPki.base64(client.certificatePem()), TestPki.base64(key(form)))));
    assertThat(config.clientCertPem()).isEqualTo(client.certificatePemBytes());
    assertSameKey(Pem.privateKey(config.clientKeyPem(), "key"), client.keys().getPrivate());
    assertThat(config.toString()).contains("auth=client-certificate");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("keyForms")
  void clientCertificateAndKeyFilesInEveryKeyForm(String name, String form) throws Exception {
    TestPki.Issued client = client(form);
    Files.write(dir.resolve("client.crt"), client.certificatePemBytes());
    Files.writeString(dir.resolve("client.key"), key(form));
    KubernetesConfig config = parse(simple("", """
        client-certificate: client.crt
        client-key: client.key"""));
    assertSameKey(Pem.privateKey(config.clientKeyPem(), "key"), client.keys().getPrivate());
  }

  /** The same private key, whatever its encoding (a SEC1 key rewrapped keeps its curve and public key). */
  private static void assertSameKey(PrivateKey actual, PrivateKey expected) {
    assertThat(actual.getAlgorithm()).isEqualTo(expected.getAlgorithm());
    if (expected instanceof RSAPrivateKey rsa) {
      assertThat(((RSAPrivateKey) actual).getPrivateExponent()).isEqualTo(rsa.getPrivateExponent());
      assertThat(((RSAPrivateKey) actual).getModulus()).isEqualTo(rsa.getModulus());
    } else {
      assertThat(((ECPrivateKey) actual).getS()).isEqualTo(((ECPrivateKey) expected).getS());
      assertThat(((ECPrivateKey) actual).getParams().getCurve()).isEqualTo(((ECPrivateKey) expected).getParams()
          .getCurve());
    }
  }

  @Test
  void aKeyFileWithTextAroundThePemBlockIsRead() throws Exception {
    // openssl and cert-manager write "Bag Attributes" or comments before the block.
    Files.write(dir.resolve("client.crt"), ecClient.certificatePemBytes());
    Files.writeString(dir.resolve("client.key"), "Bag Attributes\n    localKeyID: 01\n" + ecClient.pkcs8Pem());
    KubernetesConfig config = parse(simple("", "client-certificate: client.crt\nclient-key: client.key"));
    assertSameKey(Pem.privateKey(config.clientKeyPem(), "key"), ecClient.keys().getPrivate());
  }

  @Test
  void aClientCertificateAndATokenAreBothUsed() throws Exception {
    KubernetesConfig config = parse(simple("", """
        token: t
        client-certificate-data: %s
        client-key-data: %s""".formatted(TestPki.base64(ecClient.certificatePem()),
        TestPki.base64(ecClient.pkcs8Pem()))));
    assertThat(config.tokenSource()).isEqualTo(new TokenSource.Fixed("t"));
    assertThat(config.clientCertPem()).isNotNull();
  }

  // --- exec credential plugins ---

  /**
   * A plugin that counts its runs in {@code runs}, records the ExecCredential info it was given, and answers the
   * token {@code <first argument>-<PREFIX env>-<run>}, expiring at {@code $EXPIRES} when set.
   */
  private Path plugin(String name) throws Exception {
    Path script = dir.resolve(name);
    Files.writeString(script, """
        #!/bin/sh
        n=$(cat "$STATE/runs" 2>/dev/null || echo 0)
        n=$((n + 1))
        echo "$n" > "$STATE/runs"
        printf '%s' "$KUBERNETES_EXEC_INFO" > "$STATE/exec-info"
        expiry=""
        if [ -n "$EXPIRES" ]; then expiry=",\\"expirationTimestamp\\":\\"$EXPIRES\\""; fi
        echo "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\
        \\"status\\":{\\"token\\":\\"$1-$PREFIX-$n\\"$expiry}}"
        """);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    return script;
  }

  private String execUser(String command, String expires) {
    return """
        exec:
          apiVersion: client.authentication.k8s.io/v1
          command: %s
          args: [from-args]
          env:
          - {name: STATE, value: "%s"}
          - {name: PREFIX, value: from-env}
          - {name: EXPIRES, value: "%s"}
          interactiveMode: Never""".formatted(command, dir, expires);
  }

  private int runs() throws Exception {
    return Integer.parseInt(Files.readString(dir.resolve("runs")).strip());
  }

  @Test
  @DisabledOnOs(OS.WINDOWS)
  void anExecPluginsTokenIsUsedAndKeptUntilA401() throws Exception {
    Path script = plugin("get-token");
    KubernetesConfig config = parse(simple("", execUser(script.toString(), "")));
    TokenSource tokens = config.tokenSource();
    assertThat(tokens).isInstanceOf(TokenSource.Exec.class);
    assertThat(Files.exists(dir.resolve("runs"))).as("run lazily, at the first request").isFalse();
    assertThat(tokens.token(false)).isEqualTo("from-args-from-env-1");
    assertThat(tokens.token(false)).isEqualTo("from-args-from-env-1");
    assertThat(runs()).isEqualTo(1);
    assertThat(Files.readString(dir.resolve("exec-info")))
        .contains("\"apiVersion\":\"client.authentication.k8s.io/v1\"", "\"kind\":\"ExecCredential\"",
            "\"interactive\":false");
    // The server refused it: run the plugin again.
    assertThat(tokens.token(true)).isEqualTo("from-args-from-env-2");
    assertThat(runs()).isEqualTo(2);
  }

  @Test
  @DisabledOnOs(OS.WINDOWS)
  void anExecPluginIsRunAgainWhenItsTokenExpires() throws Exception {
    Path script = plugin("get-token");
    // Expiring within the 10 s safety margin: every request needs a fresh token.
    KubernetesConfig config = parse(simple("", execUser(script.toString(), Instant.now().plusSeconds(5).toString())));
    assertThat(config.tokenSource().token(false)).isEqualTo("from-args-from-env-1");
    assertThat(config.tokenSource().token(false)).isEqualTo("from-args-from-env-2");
    // A token valid for an hour is reused.
    KubernetesConfig hour = parse(simple("", execUser(script.toString(), Instant.now().plusSeconds(3600).toString())));
    String first = hour.tokenSource().token(false);
    assertThat(hour.tokenSource().token(false)).isEqualTo(first);
  }

  /** Regression: a relative command with a directory (./bin/token) ran from the JVM's directory, not kubeconfig's. */
  @Test
  @DisabledOnOs(OS.WINDOWS)
  void aRelativeExecCommandIsResolvedAgainstTheKubeconfigsDirectory() throws Exception {
    Files.createDirectories(dir.resolve("bin"));
    Path script = plugin("bin-token");
    Files.move(script, dir.resolve("bin").resolve("get-token"));
    KubernetesConfig config = parse(simple("", execUser("./bin/get-token", "")));
    assertThat(config.tokenSource().token(false)).isEqualTo("from-args-from-env-1");
  }

  @Test
  @DisabledOnOs(OS.WINDOWS)
  void anExecCommandWithoutADirectoryIsLookedUpOnThePath() throws Exception {
    // "sh" is on every PATH; it runs the script given as its argument.
    Path script = plugin("get-token");
    KubernetesConfig config = parse(simple("", execUser("sh", "").replace("args: [from-args]",
        "args: [\"" + script + "\", from-args]")));
    assertThat(config.tokenSource().token(false)).isEqualTo("from-args-from-env-1");
  }

  /** Regression: a failing plugin gave "credential plugin X failed", without its exit status. */
  @Test
  @DisabledOnOs(OS.WINDOWS)
  void aFailingExecPluginIsReportedWithItsExitStatus() throws Exception {
    Path script = dir.resolve("fail");
    Files.writeString(script, "#!/bin/sh\necho 'not logged in' >&2\nexit 3\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    TokenSource tokens = parse(simple("", execUser(script.toString(), ""))).tokenSource();
    assertThatThrownBy(() -> tokens.token(false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("credential plugin " + script + " exited with status 3");
  }

  /** Regression: a plugin printing something other than JSON was reported as "cannot run credential plugin". */
  @Test
  @DisabledOnOs(OS.WINDOWS)
  void anExecPluginPrintingNoJsonIsReportedAsSuch() throws Exception {
    Path script = dir.resolve("chatty");
    Files.writeString(script, "#!/bin/sh\necho 'Please log in at https://login.example'\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    TokenSource tokens = parse(simple("", execUser(script.toString(), ""))).tokenSource();
    assertThatThrownBy(() -> tokens.token(false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("credential plugin " + script + " printed no ExecCredential JSON: ")
        .hasMessageContaining("Please log in");
  }

  @Test
  @DisabledOnOs(OS.WINDOWS)
  void anExecPluginReturningNoTokenSaysWhatIsUnsupported() throws Exception {
    Path script = dir.resolve("certs-only");
    Files.writeString(script, "#!/bin/sh\necho '{\"kind\":\"ExecCredential\",\"status\":"
        + "{\"clientCertificateData\":\"x\",\"clientKeyData\":\"y\"}}'\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    TokenSource tokens = parse(simple("", execUser(script.toString(), ""))).tokenSource();
    assertThatThrownBy(() -> tokens.token(false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("returned no status.token")
        .hasMessageContaining("client certificates from plugins are not supported");
  }

  @Test
  void aMissingExecCommandGivesItsInstallHint() throws Exception {
    TokenSource tokens = parse(simple("", """
        exec:
          apiVersion: client.authentication.k8s.io/v1
          command: /nonexistent/kubelogin
          installHint: install kubelogin from https://example.org/kubelogin""")).tokenSource();
    assertThatThrownBy(() -> tokens.token(false))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("cannot run credential plugin /nonexistent/kubelogin")
        .hasMessageContaining("install kubelogin from https://example.org/kubelogin");
  }

  @Test
  void anExecPluginWithoutACommandIsAnError() throws Exception {
    assertThatThrownBy(() -> parse(simple("", "exec: {apiVersion: client.authentication.k8s.io/v1}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageEndingWith("exec plugin has no command");
  }

  // --- missing and invalid fields ---

  private void assertRejected(Path file, String message) {
    assertThatThrownBy(() -> parse(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("kubeconfig " + file)
        .hasMessageContaining(message);
  }

  @Test
  void aFileThatIsNotYamlOrNotAMappingIsRejected() throws Exception {
    assertRejected(kubeconfig("clusters: [unclosed"), "is not valid YAML");
    assertRejected(kubeconfig("- just\n- a list\n"), "is not a mapping");
    assertRejected(kubeconfig(""), "is not a mapping");
  }

  @Test
  void aMissingFileIsReportedWithItsPath() {
    Path missing = dir.resolve("no-such-config");
    assertThatThrownBy(() -> parse(missing))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining(missing.toString());
  }

  @Test
  void missingContextsClustersUsersAndServersAreNamed() throws Exception {
    assertRejected(kubeconfig("clusters: []\n"), "has no current-context; name a context");
    assertRejected(kubeconfig("current-context: gone\ncontexts: []\n"), "no context named 'gone' in contexts");
    assertRejected(kubeconfig("current-context: c\ncontexts:\n- name: c\n  context: {user: u}\n"),
        "context c names no cluster");
    assertRejected(kubeconfig("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"),
        "no cluster named 'k' in clusters");
    assertRejected(kubeconfig("""
        current-context: c
        clusters:
        - name: k
          cluster: {certificate-authority: ca.crt}
        contexts:
        - name: c
          context: {cluster: k}
        """), "cluster k has no server");
    assertRejected(kubeconfig("""
        current-context: c
        clusters:
        - name: k
          cluster: {server: "https://127.0.0.1:6443"}
        contexts:
        - name: c
          context: {cluster: k, user: nobody}
        """), "no user named 'nobody' in users");
    assertThatThrownBy(() -> KubernetesConfig.fromKubeconfig(simple("", "token: t"), "staging"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no context named 'staging' in contexts");
  }

  /** Regression: a bad server URL gave only URI's or the builder's message, without the kubeconfig or cluster. */
  @Test
  void anInvalidServerIsReportedWithTheKubeconfigAndCluster() throws Exception {
    assertRejected(kubeconfig("""
        current-context: c
        clusters:
        - name: k
          cluster: {server: "ftp://127.0.0.1"}
        contexts:
        - name: c
          context: {cluster: k}
        """), "cluster k server: API server URI must be http or https: ftp://127.0.0.1");
    assertRejected(kubeconfig("""
        current-context: c
        clusters:
        - name: k
          cluster: {server: "https://bad host:6443"}
        contexts:
        - name: c
          context: {cluster: k}
        """), "cluster k server: ");
  }

  @Test
  void unsupportedAuthenticationIsNamed() throws Exception {
    assertRejected(simple("", "auth-provider: {name: gcp}"), "user dev uses an auth-provider, which is not supported");
    assertRejected(simple("", "username: admin\npassword: secret"), "basic authentication");
  }

  @Test
  void aCertificateAuthorityThatIsNotBase64IsRejected() throws Exception {
    // One base64 character cannot be decoded (the MIME decoder skips characters outside the alphabet).
    assertRejected(simple("certificate-authority-data: Q", "token: t"),
        "cluster local: certificate-authority-data is not base64");
  }

  /** Regression: PEM errors ("certificate authority holds no certificate") did not say which kubeconfig field. */
  @Test
  void certificateAndKeyErrorsNameTheKubeconfigField() throws Exception {
    assertRejected(simple("certificate-authority-data: " + TestPki.base64("not a certificate"), "token: t"),
        "cluster local certificate-authority-data: ");
    assertRejected(simple("", """
        client-certificate-data: %s
        client-key-data: %s""".formatted(TestPki.base64(ecClient.certificatePem()),
        TestPki.base64(ecClient.certificatePem()))), "user dev client-key-data: client key holds no PEM private key");
    Files.write(dir.resolve("client.crt"), ecClient.certificatePemBytes());
    Files.writeString(dir.resolve("client.key"), TestPki.sec1Pem(ecClient.keys(), false));
    assertRejected(simple("", "client-certificate: client.crt\nclient-key: client.key"),
        "user dev client-key: client key: EC key names no curve; convert it to PKCS#8");
    Files.writeString(dir.resolve("client.key"), TestPki.pem("ENCRYPTED PRIVATE KEY", new byte[] {1, 2, 3}));
    assertRejected(simple("", "client-certificate: client.crt\nclient-key: client.key"),
        "encrypted keys are not supported");
  }

  /** Regression: a missing certificate-authority file gave "cannot read <path>" without saying which field. */
  @Test
  void aMissingReferencedFileIsNamedWithItsField() throws Exception {
    assertRejected(simple("certificate-authority: missing-ca.crt", "token: t"),
        "cluster local certificate-authority: cannot read " + dir.resolve("missing-ca.crt"));
    Files.write(dir.resolve("client.crt"), ecClient.certificatePemBytes());
    assertRejected(simple("", "client-certificate: client.crt\nclient-key: missing.key"),
        "user dev client-key: cannot read " + dir.resolve("missing.key"));
  }

  /** Regression: a missing tokenFile was found only at the first request, as kubectl reports it at load. */
  @Test
  void aMissingTokenFileIsReportedWhenTheKubeconfigIsRead() throws Exception {
    assertRejected(simple("", "tokenFile: missing-token"),
        "user dev tokenFile: no such file " + dir.resolve("missing-token"));
  }

  @Test
  void aClientCertificateWithoutItsKeyIsRejected() throws Exception {
    assertRejected(simple("", "client-certificate-data: " + TestPki.base64(ecClient.certificatePem())),
        "user dev needs both a client certificate and a client key");
    assertRejected(simple("", "client-key-data: " + TestPki.base64(ecClient.pkcs8Pem())),
        "user dev needs both a client certificate and a client key");
  }

  /** Regression: a key of another certificate was accepted, and only the TLS handshake failed, obscurely. */
  @Test
  void aClientKeyThatDoesNotMatchItsCertificateIsRejectedWhenRead() throws Exception {
    assertRejected(simple("", """
        client-certificate-data: %s
        client-key-data: %s""".formatted(TestPki.base64(ecClient.certificatePem()),
        TestPki.base64(rsaClient.pkcs1Pem()))),
        "user dev: client key does not belong to the client certificate (" + ecClient.subject() + ")");
    TestPki.Issued otherEc = TestPki.client(ca, "carol", TestPki.ecKeys());
    assertRejected(simple("", """
        client-certificate-data: %s
        client-key-data: %s""".formatted(TestPki.base64(ecClient.certificatePem()),
        TestPki.base64(otherEc.sec1Pem()))),
        "client key does not belong to the client certificate");
  }
}
