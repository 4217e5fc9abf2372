package dev.kinference.k8s;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How to reach the Kubernetes API server: its address, how to trust it, and how to authenticate. Built from the
 * pod's service account ({@link #inCluster()}), from a kubeconfig file for development ({@link #fromKubeconfig}),
 * by {@link #autodetect()} (in-cluster when running in a pod, else the kubeconfig), or by hand with
 * {@link #builder(URI)}.
 *
 * <p>A service-account token file is re-read every minute and after any 401, so rotated tokens are picked up
 * without a restart. Immutable and thread-safe.
 */
public final class KubernetesConfig {

  /** Where the kubelet mounts the service account's token, CA bundle and namespace. */
  public static final Path SERVICE_ACCOUNT_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

  private final URI server;
  private final @Nullable String namespace;
  private final @Nullable TokenSource tokenSource;
  private final byte @Nullable [] caPem;
  private final boolean insecureSkipTlsVerify;
  private final byte @Nullable [] clientCertPem;
  private final byte @Nullable [] clientKeyPem;
  private final Duration connectTimeout;
  private final Duration requestTimeout;

  private KubernetesConfig(Builder b) {
    this.server = b.server;
    this.namespace = b.namespace;
    this.tokenSource = b.tokenSource;
    this.caPem = b.caPem;
    this.insecureSkipTlsVerify = b.insecureSkipTlsVerify;
    this.clientCertPem = b.clientCertPem;
    this.clientKeyPem = b.clientKeyPem;
    this.connectTimeout = b.connectTimeout;
    this.requestTimeout = b.requestTimeout;
  }

  /** A configuration for the API server at {@code server}, such as {@code https://10.96.0.1:443}. */
  public static Builder builder(URI server) {
    return new Builder(server);
  }

  /**
   * In a pod, the service-account configuration; otherwise the kubeconfig ({@code $KUBECONFIG} or ~/.kube/config).
   *
   * @throws IllegalStateException when neither is there, saying what was looked for
   */
  public static KubernetesConfig autodetect() {
    return autodetect(System.getenv(), SERVICE_ACCOUNT_DIR, Path.of(System.getProperty("user.home")));
  }

  /** {@link #autodetect()} with the environment, mount directory and home directory given (tests). */
  static KubernetesConfig autodetect(Map<String, String> env, Path serviceAccountDir, Path home) {
    String host = env.get("KUBERNETES_SERVICE_HOST");
    Path token = serviceAccountDir.resolve("token");
    if (host != null && !host.isBlank() && Files.isRegularFile(token)) {
      return inCluster(env, serviceAccountDir);
    }
    Path kubeconfig = defaultKubeconfig(env, home);
    if (!Files.isRegularFile(kubeconfig)) {
      String pod = host == null || host.isBlank() ? "KUBERNETES_SERVICE_HOST is not set"
          : "KUBERNETES_SERVICE_HOST is set but there is no service-account token at " + token;
      throw new IllegalStateException("no Kubernetes configuration found: not in a pod (" + pod
          + "), and no kubeconfig at " + kubeconfig
          + (env.containsKey("KUBECONFIG") ? " (from $KUBECONFIG)" : " ($KUBECONFIG is not set)"));
    }
    return fromKubeconfig(kubeconfig, null);
  }

  /**
   * The pod's own configuration: {@code https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT}, the mounted CA
   * bundle, the service-account token (re-read as it rotates) and the pod's namespace.
   *
   * @throws IllegalStateException when not running in a pod
   */
  public static KubernetesConfig inCluster() {
    return inCluster(System.getenv(), SERVICE_ACCOUNT_DIR);
  }

  /** {@link #inCluster()} with the environment and mount directory given, for tests and unusual layouts. */
  public static KubernetesConfig inCluster(Map<String, String> env, Path serviceAccountDir) {
    String host = env.get("KUBERNETES_SERVICE_HOST");
    String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
    if (host == null || host.isBlank()) {
      throw new IllegalStateException("not running in a pod: KUBERNETES_SERVICE_HOST is not set");
    }
    Path token = serviceAccountDir.resolve("token");
    if (!Files.isRegularFile(token)) {
      throw new IllegalStateException("no service-account token at " + token
          + " (is automountServiceAccountToken false?)");
    }
    String h = host.strip();
    if (h.indexOf(':') >= 0 && !h.startsWith("[")) {
      h = "[" + h + "]"; // IPv6
    }
    Builder b = builder(URI.create("https://" + h + ":" + port.strip()))
        .tokenFile(token);
    Path ca = serviceAccountDir.resolve("ca.crt");
    if (Files.isRegularFile(ca)) {
      try {
        b.certificateAuthority(read(ca));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(ca + ": " + e.getMessage(), e);
      }
    }
    Path ns = serviceAccountDir.resolve("namespace");
    if (Files.isRegularFile(ns)) {
      String n = new String(read(ns), java.nio.charset.StandardCharsets.UTF_8).strip();
      if (!n.isEmpty()) {
        b.namespace(n);
      }
    }
    return b.build();
  }

  /**
   * The current context of a kubeconfig file. Supported: {@code server}, {@code certificate-authority(-data)},
   * {@code insecure-skip-tls-verify}, {@code token}, {@code tokenFile}, {@code client-certificate(-data)},
   * {@code client-key(-data)}, {@code exec} plugins returning a token, and the context's namespace. Relative paths
   * in the file are relative to its directory.
   *
   * @throws IllegalArgumentException naming the file, the cluster or user, and the field that is missing, invalid
   *     or unsupported
   * @throws java.io.UncheckedIOException when the file cannot be read
   */
  public static KubernetesConfig fromKubeconfig(Path file) {
    return fromKubeconfig(file, null);
  }

  /** The named context of a kubeconfig file (its current context when {@code context} is null). */
  public static KubernetesConfig fromKubeconfig(Path file, @Nullable String context) {
    return Kubeconfig.parse(file, context);
  }

  /** The kubeconfig location: the first entry of {@code $KUBECONFIG}, else ~/.kube/config. */
  static Path defaultKubeconfig(Map<String, String> env, Path home) {
    String k = env.get("KUBECONFIG");
    if (k != null && !k.isBlank()) {
      for (String part : k.split(java.io.File.pathSeparator)) {
        if (!part.isBlank()) {
          return Path.of(part.strip());
        }
      }
    }
    return home.resolve(".kube").resolve("config");
  }

  static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /** The API server's base URI. */
  public URI server() {
    return server;
  }

  /** The default namespace (the pod's, or the kubeconfig context's), or null. */
  public @Nullable String namespace() {
    return namespace;
  }

  /** Whether the server's certificate is accepted without verification (development only). */
  public boolean insecureSkipTlsVerify() {
    return insecureSkipTlsVerify;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** Time limit of a non-watch request. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  @Nullable TokenSource tokenSource() {
    return tokenSource;
  }

  byte @Nullable [] caPem() {
    return caPem;
  }

  byte @Nullable [] clientCertPem() {
    return clientCertPem;
  }

  byte @Nullable [] clientKeyPem() {
    return clientKeyPem;
  }

  @Override
  public String toString() {
    return "KubernetesConfig[server=" + server + ", namespace=" + namespace + ", auth="
        + (tokenSource != null ? tokenSource : clientCertPem != null ? "client-certificate" : "none")
        + (insecureSkipTlsVerify ? ", insecure" : "") + "]";
  }

  /** Configures a {@link KubernetesConfig}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private final URI server;
    private @Nullable String namespace;
    private @Nullable TokenSource tokenSource;
    private byte @Nullable [] caPem;
    private boolean insecureSkipTlsVerify;
    private byte @Nullable [] clientCertPem;
    private byte @Nullable [] clientKeyPem;
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(30);

    private Builder(URI server) {
      Objects.requireNonNull(server, "server");
      String scheme = server.getScheme();
      if (!"https".equals(scheme) && !"http".equals(scheme)) {
        throw new IllegalArgumentException("API server URI must be http or https: " + server);
      }
      if (server.getHost() == null) {
        throw new IllegalArgumentException("API server URI has no host: " + server);
      }
      String s = server.toString();
      this.server = s.endsWith("/") ? URI.create(s.substring(0, s.length() - 1)) : server;
    }

    public Builder namespace(String namespace) {
      if (namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank");
      }
      this.namespace = namespace;
      return this;
    }

    /** A fixed bearer token. */
    public Builder token(String token) {
      if (token.isBlank()) {
        throw new IllegalArgumentException("token must not be blank");
      }
      this.tokenSource = new TokenSource.Fixed(token.strip());
      return this;
    }

    /** A bearer token read from this file, re-read every minute and after a 401 (token rotation). */
    public Builder tokenFile(Path file) {
      this.tokenSource = new TokenSource.FromFile(Objects.requireNonNull(file, "file"), System::nanoTime);
      return this;
    }

    Builder tokenSource(TokenSource source) {
      this.tokenSource = source;
      return this;
    }

    /** Trusts the API server certificates signed by these PEM certificates (instead of the JDK's roots). */
    public Builder certificateAuthority(byte[] pem) {
      Pem.certificates(pem, "certificate authority"); // validate now, fail early
      this.caPem = pem.clone();
      return this;
    }

    /** Accepts any server certificate. For development against a local cluster only. */
    public Builder insecureSkipTlsVerify(boolean insecure) {
      this.insecureSkipTlsVerify = insecure;
      return this;
    }

    /**
     * Authenticates with a client certificate (PEM chain, the client's own first) and its private key (PEM,
     * PKCS#8, PKCS#1 or SEC1).
     *
     * @throws IllegalArgumentException when either is unreadable or the key is not the certificate's
     */
    public Builder clientCertificate(byte[] certificatePem, byte[] keyPem) {
      Pem.checkKeyPair(Pem.certificates(certificatePem, "client certificate").get(0),
          Pem.privateKey(keyPem, "client key"));
      this.clientCertPem = certificatePem.clone();
      this.clientKeyPem = keyPem.clone();
      return this;
    }

    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    public KubernetesConfig build() {
      if (insecureSkipTlsVerify && caPem != null) {
        throw new IllegalStateException("give either a certificate authority or insecureSkipTlsVerify, not both");
      }
      return new KubernetesConfig(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
