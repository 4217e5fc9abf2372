package dev.kinference.k8s;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * A real HTTPS server on 127.0.0.1 standing in for the API server's TLS front: it presents a given certificate,
 * asks for a client certificate (optional, checked against a given CA, as the API server does), records what each
 * request carried, and answers with a scripted function. HTTP/1.1 over the JDK's {@link SSLServerSocket}, one
 * request per connection ({@code Connection: close}); TLS is the point, not HTTP.
 */
final class TlsApiServer implements AutoCloseable {

  /** One request as the server saw it. */
  record Seen(String method, String path, String authorization, String clientSubject) {}

  /** A scripted answer. */
  record Answer(int status, String body) {
    static Answer ok() {
      return new Answer(200, "{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[]}");
    }

    static Answer unauthorized() {
      return new Answer(401, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
          + "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}");
    }
  }

  final List<Seen> seen = new CopyOnWriteArrayList<>();
  /** Connections whose TLS handshake failed, with the server side's reason. */
  final List<String> failedHandshakes = new CopyOnWriteArrayList<>();
  private final SSLServerSocket listener;
  private volatile Function<Seen, Answer> script = s -> Answer.ok();

  /** Presents {@code serverCert}; accepts client certificates signed by {@code clientCa} (or none). */
  TlsApiServer(TestPki.Issued serverCert, TestPki.Issued clientCa) throws IOException, GeneralSecurityException {
    this(serverCert, clientCa, false);
  }

  /** As above; {@code requireClientCertificate} refuses connections without one (the API server does not). */
  TlsApiServer(TestPki.Issued serverCert, TestPki.Issued clientCa, boolean requireClientCertificate)
      throws IOException, GeneralSecurityException {
    char[] password = "test".toCharArray();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    keys.setKeyEntry("server", serverCert.keys().getPrivate(), password,
        new Certificate[] {serverCert.certificate()});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, password);
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("client-ca", clientCa.certificate());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
    listener = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50,
        InetAddress.getLoopbackAddress());
    if (requireClientCertificate) {
      listener.setNeedClientAuth(true);
    } else {
      listener.setWantClientAuth(true); // like the API server: a certificate is one way in, not a requirement
    }
    Thread.ofVirtual().name("tls-api-server").start(this::acceptLoop);
  }

  /** The server's address, by IP (its certificate names 127.0.0.1). */
  URI uri() {
    return URI.create("https://127.0.0.1:" + listener.getLocalPort());
  }

  /** Answers every following request with {@code answer}. */
  void answer(Function<Seen, Answer> answer) {
    this.script = answer;
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        Thread.ofVirtual().start(() -> serve((SSLSocket) s));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(SSLSocket socket) {
    try (socket) {
      try {
        socket.startHandshake();
      } catch (IOException e) {
        failedHandshakes.add(String.valueOf(e.getMessage()));
        return;
      }
      String subject;
      try {
        subject = ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSubjectX500Principal()
            .getName();
      } catch (SSLPeerUnverifiedException noClientCertificate) {
        subject = "";
      }
      InputStream in = new BufferedInputStream(socket.getInputStream());
      String[] requestLine = line(in).split(" ");
      String authorization = "";
      long length = 0;
      for (String header = line(in); !header.isEmpty(); header = line(in)) {
        int colon = header.indexOf(':');
        String name = header.substring(0, colon).strip().toLowerCase(Locale.ROOT);
        String value = header.substring(colon + 1).strip();
        if (name.equals("authorization")) {
          authorization = value;
        } else if (name.equals("content-length")) {
          length = Long.parseLong(value);
        }
      }
      in.skipNBytes(length);
      Seen seenNow = new Seen(requestLine[0], requestLine[1], authorization, subject);
      seen.add(seenNow);
      Answer a = script.apply(seenNow);
      byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
      OutputStream out = socket.getOutputStream();
      out.write(("HTTP/1.1 " + a.status() + " " + (a.status() == 200 ? "OK" : "Error") + "\r\n"
          + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
    } catch (IOException e) {
      // the client went away
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new IOException("connection closed mid-request");
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  /** The Authorization headers seen, in order. */
  List<String> authorizations() {
    return seen.stream().map(Seen::authorization).toList();
  }

  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
