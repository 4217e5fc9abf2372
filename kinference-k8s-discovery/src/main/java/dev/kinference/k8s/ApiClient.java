package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;

/**
 * The few API calls discovery needs, over {@code java.net.http}: GET and POST of JSON, and watches (chunked HTTP or
 * WebSocket). Adds the bearer token to every request and retries once with a re-read token after a 401.
 * Thread-safe; one instance is shared by every watch of a source.
 */
final class ApiClient implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_ERROR_BODY = 2048;

  private final KubernetesConfig config;
  private final HttpClient http;

  ApiClient(KubernetesConfig config) {
    this.config = config;
    HttpClient.Builder b = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(config.connectTimeout())
        .followRedirects(HttpClient.Redirect.NEVER);
    if ("https".equals(config.server().getScheme())) {
      b.sslContext(sslContext(config));
    }
    this.http = b.build();
  }

  KubernetesConfig config() {
    return config;
  }

  /** GETs {@code path} with {@code query} (kept in order) and parses the JSON answer. */
  JsonNode get(String path, Map<String, String> query) throws IOException, InterruptedException {
    return exchange("GET", path, query, null);
  }

  /** POSTs a JSON object to {@code path}. */
  JsonNode post(String path, JsonNode body) throws IOException, InterruptedException {
    return exchange("POST", path, Map.of(), JSON.writeValueAsBytes(body));
  }

  private JsonNode exchange(String method, String path, Map<String, String> query, byte @Nullable [] body)
      throws IOException, InterruptedException {
    URI uri = uri(path, query, false);
    for (int attempt = 0; ; attempt++) {
      HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(config.requestTimeout())
          .header("Accept", "application/json");
      String token = token(attempt > 0);
      if (token != null) {
        rb.header("Authorization", "Bearer " + token);
      }
      if (body != null) {
        rb.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofByteArray(body));
      } else {
        rb.method(method, HttpRequest.BodyPublishers.noBody());
      }
      HttpResponse<byte[]> r;
      try {
        r = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (IOException e) {
        throw explained(e);
      }
      if (r.statusCode() == 401 && attempt == 0 && config.tokenSource() != null) {
        continue;
      }
      if (r.statusCode() / 100 != 2) {
        throw new ApiException(r.statusCode(), method + " " + path + ": " + r.statusCode() + " "
            + statusMessage(r.body()));
      }
      return JSON.readTree(r.body());
    }
  }

  /**
   * Opens a watch. Errors (a refused request, a dropped connection) are reported by {@link WatchStream#next}, so a
   * 410 at the start and a 410 mid-stream are handled alike.
   */
  WatchStream watch(String path, Map<String, String> query, WatchTransport transport, boolean staleToken)
      throws IOException, InterruptedException {
    String token = token(staleToken);
    return transport == WatchTransport.WEBSOCKET ? webSocketWatch(path, query, token)
        : httpWatch(path, query, token);
  }

  private @Nullable String token(boolean stale) {
    TokenSource ts = config.tokenSource();
    return ts == null ? null : ts.token(stale);
  }

  private WatchStream httpWatch(String path, Map<String, String> query, @Nullable String token) {
    WatchStream stream = new WatchStream();
    HttpRequest.Builder rb = HttpRequest.newBuilder(uri(path, query, false)).header("Accept", "application/json")
        .GET();
    if (token != null) {
      rb.header("Authorization", "Bearer " + token);
    }
    HttpResponse.BodyHandler<Void> handler = info -> {
      if (info.statusCode() == 200) {
        return HttpResponse.BodySubscribers.fromLineSubscriber(stream.lineSubscriber(), s -> null,
            StandardCharsets.UTF_8, null);
      }
      return HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.ofByteArray(), bytes -> {
        stream.fail(new ApiException(info.statusCode(), "watch " + path + ": " + info.statusCode() + " "
            + statusMessage(bytes)));
        return null;
      });
    };
    CompletableFuture<HttpResponse<Void>> f = http.sendAsync(rb.build(), handler);
    var unused = f.whenComplete((r, e) -> {
      if (e != null) {
        stream.fail(explainedFailure(e instanceof java.util.concurrent.CompletionException && e.getCause() != null
            ? e.getCause() : e));
      } else {
        stream.end();
      }
    });
    stream.onClose(() -> f.cancel(true));
    return stream;
  }

  private WatchStream webSocketWatch(String path, Map<String, String> query, @Nullable String token)
      throws IOException, InterruptedException {
    WatchStream stream = new WatchStream();
    WebSocket.Builder wb = http.newWebSocketBuilder().connectTimeout(config.connectTimeout());
    if (token != null) {
      wb.header("Authorization", "Bearer " + token);
    }
    CompletableFuture<WebSocket> f = wb.buildAsync(uri(path, query, true), stream.webSocketListener());
    try {
      WebSocket ws = f.get(config.connectTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
      stream.onClose(ws::abort);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof WebSocketHandshakeException h) {
        int status = h.getResponse().statusCode();
        Object body = h.getResponse().body();
        stream.fail(new ApiException(status, "watch " + path + ": " + status + " "
            + (body instanceof byte[] bytes ? statusMessage(bytes) : "")));
      } else {
        stream.fail(explainedFailure(cause != null ? cause : e));
      }
    } catch (TimeoutException e) {
      f.cancel(true);
      stream.fail(new IOException("WebSocket handshake with " + config.server() + " timed out"));
    }
    return stream;
  }

  URI uri(String path, Map<String, String> query, boolean webSocket) {
    StringBuilder sb = new StringBuilder();
    String base = config.server().toString();
    if (webSocket) {
      base = base.startsWith("https:") ? "wss:" + base.substring(6) : "ws:" + base.substring(5);
    }
    sb.append(base).append(path);
    char sep = '?';
    for (Map.Entry<String, String> q : query.entrySet()) {
      sb.append(sep).append(q.getKey()).append('=')
          .append(URLEncoder.encode(q.getValue(), StandardCharsets.UTF_8).replace("+", "%20"));
      sep = '&';
    }
    return URI.create(sb.toString());
  }

  /**
   * {@code failure} itself, or, when it is a failed TLS handshake, an {@link SSLHandshakeException} saying which
   * server was refused and why in the terms of the configuration (which certificate authority was trusted, which
   * host the certificate was checked for), with the JDK's own message after it. The JDK alone says only "PKIX path
   * building failed", which names neither the server nor where its trust came from.
   */
  Throwable explainedFailure(Throwable failure) {
    SSLHandshakeException handshake = null;
    for (Throwable t = failure; t != null && handshake == null; t = t.getCause()) {
      if (t instanceof SSLHandshakeException h) {
        handshake = h;
      }
    }
    if (handshake == null) {
      return failure;
    }
    String jdk = String.valueOf(handshake.getMessage());
    URI server = config.server();
    String why;
    if (hasCause(handshake, CertificateExpiredException.class)
        || hasCause(handshake, CertificateNotYetValidException.class)) {
      why = "its certificate has expired or is not yet valid";
    } else if (hasCause(handshake, CertPathBuilderException.class) || jdk.contains("PKIX path")) {
      byte[] ca = config.caPem();
      why = ca != null
          ? "its certificate is not signed by the configured certificate authority ("
              + String.join("; ", Pem.certificates(ca, "certificate authority").stream()
                  .map(c -> c.getSubjectX500Principal().getName()).toList()) + ")"
          : "its certificate is not signed by any of the JDK's trusted root certificates, and no certificate "
              + "authority is configured (kubeconfig certificate-authority(-data), the pod's ca.crt, or "
              + "KubernetesConfig.Builder.certificateAuthority)";
    } else if (jdk.contains("subject alternative name") || jdk.contains("No name matching")) {
      why = "its certificate is not valid for host " + server.getHost();
    } else if (jdk.contains("bad_certificate") || jdk.contains("certificate_required")
        || jdk.contains("unknown_ca")) {
      why = config.clientCertPem() != null ? "it refused the client certificate"
          : "it requires a client certificate";
    } else {
      why = "the TLS handshake failed";
    }
    SSLHandshakeException out = new SSLHandshakeException("cannot connect securely to the API server " + server
        + ": " + why + " (" + jdk + ")");
    out.initCause(handshake);
    return out;
  }

  private IOException explained(IOException e) {
    return (IOException) explainedFailure(e);
  }

  private static boolean hasCause(Throwable t, Class<? extends Throwable> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  /** The message of a Kubernetes Status body, or the start of the body. */
  static String statusMessage(byte[] body) {
    try {
      JsonNode n = JSON.readTree(body);
      if (n != null && n.hasNonNull("message")) {
        return n.get("message").asText();
      }
    } catch (IOException notJson) {
      // fall through to the raw text
    }
    String s = new String(body, 0, Math.min(body.length, MAX_ERROR_BODY), StandardCharsets.UTF_8);
    return s.strip();
  }

  @Override
  public void close() {
    http.shutdownNow();
  }

  private static SSLContext sslContext(KubernetesConfig config) {
    try {
      TrustManager[] trust = null;
      if (config.insecureSkipTlsVerify()) {
        trust = new TrustManager[] {new TrustEverything()};
      } else if (config.caPem() != null) {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(Pem.trustStore(Pem.certificates(config.caPem(), "certificate authority")));
        trust = tmf.getTrustManagers();
      }
      javax.net.ssl.KeyManager[] keys = null;
      byte[] certPem = config.clientCertPem();
      byte[] keyPem = config.clientKeyPem();
      if (certPem != null && keyPem != null) {
        char[] password = "kinference".toCharArray();
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(Pem.keyStore(Pem.privateKey(keyPem, "client key"), Pem.certificates(certPem, "client certificate"),
            password), password);
        keys = kmf.getKeyManagers();
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, trust, new SecureRandom());
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot set up TLS for " + config.server() + ": " + e.getMessage(), e);
    }
  }

  /** Accepts any certificate and host name: {@code insecure-skip-tls-verify}. */
  private static final class TrustEverything extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  /**
   * One open watch: JSON event texts in arrival order, then an end or an error. Filled by the HTTP client's or the
   * WebSocket's threads, drained by one watch loop. {@link #close} may be called from any thread.
   */
  static final class WatchStream implements AutoCloseable {
    private static final Object END = new Object();
    private final LinkedBlockingQueue<Object> items = new LinkedBlockingQueue<>();
    private volatile @Nullable Runnable onClose;
    private volatile boolean closed;
    private volatile Flow.@Nullable Subscription subscription;

    void end() {
      items.add(END);
    }

    void fail(Throwable t) {
      items.add(t);
    }

    void onClose(Runnable action) {
      this.onClose = action;
      if (closed) {
        action.run();
      }
    }

    /**
     * The next event's JSON text; null when the server ended the watch.
     *
     * @throws IOException when the connection failed, the server refused the watch, or nothing (not even a
     *     bookmark) arrived within {@code idleTimeout}
     */
    @Nullable String next(Duration idleTimeout) throws IOException, InterruptedException {
      Object o = items.poll(idleTimeout.toMillis(), TimeUnit.MILLISECONDS);
      if (o == null) {
        throw new IOException("watch silent for " + idleTimeout.toSeconds() + " s; reconnecting");
      }
      if (o == END) {
        items.add(END); // stay ended
        return null;
      }
      if (o instanceof String s) {
        return s;
      }
      items.add(o); // stay failed
      Throwable t = (Throwable) o;
      if (t instanceof IOException io) {
        throw io;
      }
      if (t instanceof InterruptedException) {
        throw new InterruptedIOException("watch interrupted");
      }
      throw new IOException("watch failed: " + t, t);
    }

    @Override
    public void close() {
      closed = true;
      Flow.Subscription s = subscription;
      if (s != null) {
        s.cancel();
      }
      Runnable r = onClose;
      if (r != null) {
        r.run();
      }
      items.add(END);
    }

    Flow.Subscriber<String> lineSubscriber() {
      return new Flow.Subscriber<>() {
        @Override
        public void onSubscribe(Flow.Subscription s) {
          subscription = s;
          if (closed) {
            s.cancel();
          } else {
            s.request(Long.MAX_VALUE);
          }
        }

        @Override
        public void onNext(String line) {
          if (!line.isBlank()) {
            items.add(line);
          }
        }

        @Override
        public void onError(Throwable t) {
          fail(t);
        }

        @Override
        public void onComplete() {
          end();
        }
      };
    }

    WebSocket.Listener webSocketListener() {
      return new WebSocket.Listener() {
        private final StringBuilder text = new StringBuilder();
        private final java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();

        @Override
        public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
          text.append(data);
          if (last) {
            deliver(text.toString());
            text.setLength(0);
          }
          ws.request(1);
          return null;
        }

        @Override
        public @Nullable CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
          byte[] chunk = new byte[data.remaining()];
          data.get(chunk);
          binary.writeBytes(chunk);
          if (last) {
            deliver(binary.toString(StandardCharsets.UTF_8));
            binary.reset();
          }
          ws.request(1);
          return null;
        }

        private void deliver(String message) {
          // A message may hold one event, or several separated by newlines.
          for (String line : message.split("\n")) {
            if (!line.isBlank()) {
              items.add(line);
            }
          }
        }

        @Override
        public @Nullable CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
          end();
          return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
          fail(error);
        }
      };
    }
  }
}
