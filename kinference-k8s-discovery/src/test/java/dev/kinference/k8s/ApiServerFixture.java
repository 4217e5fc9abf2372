package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The fabric8 mock Kubernetes API server in CRUD mode (objects created, replaced and deleted over HTTP are listed
 * and watched, WebSocket watches get their ADDED/MODIFIED/DELETED events), behind a {@link DropProxy}, plus a
 * script for what CRUD mode cannot do: chunked HTTP watch responses (events, bookmarks, ERROR 410), error statuses
 * and held-open watches. Every request is recorded. A {@link MockWatchDeadlockBreaker} runs alongside.
 */
final class ApiServerFixture implements AutoCloseable {

  final KubernetesMockServer server;
  final DropProxy proxy;
  final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
  private final KubernetesCrudDispatcher crud = new KubernetesCrudDispatcher();
  private final ConcurrentLinkedDeque<Function<RecordedRequest, MockResponse>> httpWatchScript =
      new ConcurrentLinkedDeque<>();
  private final ConcurrentLinkedDeque<Rule> rules = new ConcurrentLinkedDeque<>();
  private final HttpClient http;
  private final String scheme;
  private final MockWatchDeadlockBreaker deadlockBreaker = new MockWatchDeadlockBreaker();

  /** A one-shot answer to the first request matching a predicate, ahead of CRUD. */
  private record Rule(Predicate<RecordedRequest> matches, Function<RecordedRequest, MockResponse> answer) {}

  ApiServerFixture() throws IOException {
    this(false);
  }

  ApiServerFixture(boolean https) throws IOException {
    this.scheme = https ? "https" : "http";
    HttpClient.Builder hb = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1);
    if (https) {
      hb.sslContext(trustAll());
    }
    this.http = hb.build();
    Dispatcher dispatcher = new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        requests.add(r);
        for (Rule rule : rules) {
          if (rule.matches().test(r) && rules.remove(rule)) {
            return rule.answer().apply(r);
          }
        }
        if (isWatch(r) && !isUpgrade(r)) {
          Function<RecordedRequest, MockResponse> next = httpWatchScript.poll();
          if (next != null) {
            return next.apply(r);
          }
          return holdOpen();
        }
        return crud.dispatch(r);
      }

      @Override
      public void shutdown() {
        crud.shutdown();
      }

      @Override
      public void releaseResources() {
        crud.releaseResources();
      }
    };
    server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, https);
    server.start(InetAddress.getLoopbackAddress(), 0);
    proxy = new DropProxy(server.getPort());
  }

  /** For writing to an HTTPS mock server whose certificate is not the point. */
  private static javax.net.ssl.SSLContext trustAll() {
    try {
      javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
      ctx.init(null, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509ExtendedTrustManager() {
        @Override
        public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a) {}

        @Override
        public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a) {}

        @Override
        public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a, java.net.Socket s) {}

        @Override
        public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a, java.net.Socket s) {}

        @Override
        public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a, javax.net.ssl.SSLEngine e) {}

        @Override
        public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a, javax.net.ssl.SSLEngine e) {}

        @Override
        public java.security.cert.X509Certificate[] getAcceptedIssuers() {
          return new java.security.cert.X509Certificate[0];
        }
      }}, null);
      return ctx;
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static boolean isWatch(RecordedRequest r) {
    return r.getPath().contains("watch=true");
  }

  static boolean isUpgrade(RecordedRequest r) {
    String u = r.getHeader("Upgrade");
    return u != null && u.toLowerCase(java.util.Locale.ROOT).contains("websocket");
  }

  /** The API server as the code under test sees it: through the proxy. */
  URI uri() {
    return URI.create("http://127.0.0.1:" + proxy.port());
  }

  io.fabric8.kubernetes.client.Config config() {
    return new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
        .withMasterUrl(uri().toString()).withOauthToken("test-token").withWatchReconnectInterval(50)
        .withWatchReconnectLimit(-1).withWebsocketPingInterval(500L).withRequestTimeout(5_000).withConnectionTimeout(2_000).build();
  }

  /** The next HTTP (non-WebSocket) watch gets this answer; unscripted ones are held open and silent. */
  void scriptHttpWatch(Function<RecordedRequest, MockResponse> answer) {
    httpWatchScript.add(answer);
  }

  /** The next request matching {@code matches} gets {@code answer} instead of the CRUD store's. */
  void once(Predicate<RecordedRequest> matches, Function<RecordedRequest, MockResponse> answer) {
    rules.add(new Rule(matches, answer));
  }

  /** A watch response: these events, one JSON line each, then the end of the watch. */
  static MockResponse events(String... events) {
    StringBuilder sb = new StringBuilder();
    for (String e : events) {
      sb.append(e).append('\n');
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(sb.toString());
  }

  static String event(String type, JsonNode object) {
    ObjectNode e = EndpointMapper.JSON.createObjectNode();
    e.put("type", type);
    e.set("object", object);
    return e.toString();
  }

  static String bookmark(String resourceVersion) {
    return "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
        + "\"resourceVersion\":\"" + resourceVersion + "\"}}}";
  }

  static String goneEvent() {
    return "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
        + "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (99)\",\"reason\":\"Expired\","
        + "\"code\":410}}";
  }

  static MockResponse status(int code, String reason) {
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" + reason
            + "\",\"code\":" + code + "}");
  }

  /** A watch the server keeps open without sending anything (until the test ends or the proxy drops it). */
  static MockResponse holdOpen() {
    return new MockResponse().setResponseCode(200).setBody("\n").setBodyDelay(Duration.ofSeconds(60));
  }

  /** Requests whose path starts with {@code prefix}. */
  List<RecordedRequest> requestsTo(String prefix) {
    List<RecordedRequest> out = new ArrayList<>();
    for (RecordedRequest r : requests) {
      if (r.getPath().startsWith(prefix)) {
        out.add(r);
      }
    }
    return out;
  }

  // --- writing to the CRUD store, straight to the server (not through the proxy) ---

  JsonNode create(String collectionPath, JsonNode object) {
    return send("POST", collectionPath, object, 200, 201);
  }

  JsonNode replace(String collectionPath, JsonNode object) {
    return send("PUT", collectionPath + "/" + object.path("metadata").path("name").asText(), object, 200);
  }

  void delete(String collectionPath, String name) {
    send("DELETE", collectionPath + "/" + name, null, 200);
  }

  private JsonNode send(String method, String path, JsonNode body, int... ok) {
    try {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(scheme + "://localhost:" + server.getPort() + path))
          .header("Content-Type", "application/json")
          .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(body.toString()));
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      boolean fine = false;
      for (int code : ok) {
        fine |= r.statusCode() == code;
      }
      assertThat(fine).as("%s %s -> %s %s", method, path, r.statusCode(), r.body()).isTrue();
      return r.body().isEmpty() ? EndpointMapper.JSON.createObjectNode() : EndpointMapper.JSON.readTree(r.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws IOException {
    try {
      proxy.close();
      server.shutdown();
      http.close();
    } finally {
      deadlockBreaker.close();
    }
  }
}
