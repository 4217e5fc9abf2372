package dev.kinference.k8s;

import static dev.kinference.k8s.ApiServerFixture.bookmark;
import static dev.kinference.k8s.ApiServerFixture.event;
import static dev.kinference.k8s.ApiServerFixture.events;
import static dev.kinference.k8s.ApiServerFixture.goneEvent;
import static dev.kinference.k8s.ApiServerFixture.status;
import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watch protocol over chunked HTTP (the default transport) against the mock API server: lists come from its
 * CRUD store, watch responses are scripted with what a real API server sends (events, bookmarks, ERROR 410,
 * error statuses), and connections are cut by a proxy.
 */
class WatchProtocolTest {

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

  private KubernetesEndpointSource.Builder podSource(KubernetesConfig config) {
    return KubernetesEndpointSource.builder().config(config).namespace(NS).podSelector("app=vllm")
        .backoff(Duration.ofMillis(20), Duration.ofMillis(100));
  }

  private List<RecordedRequest> httpWatches() {
    return api.requests.stream().filter(ApiServerFixture::isWatch).toList();
  }

  private List<RecordedRequest> lists() {
    return api.requests.stream().filter(r -> r.getMethod().equals("GET") && r.getPath().startsWith(PODS)
        && !ApiServerFixture.isWatch(r))
        .toList();
  }

  private void awaitHttpWatches(int n) throws InterruptedException {
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (httpWatches().size() < n) {
      assertThat(System.nanoTime()).as("%d watches", n).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  private static Map<String, String> query(RecordedRequest r) {
    Map<String, String> q = new LinkedHashMap<>();
    String raw = URI.create(r.getPath()).getRawQuery();
    for (String kv : raw.split("&")) {
      int eq = kv.indexOf('=');
      q.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
    }
    return q;
  }

  @Test
  void bookmarksAdvanceTheVersionAndGoneRelistsInBothForms() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    ObjectNode b = pod("vllm-b", "192.0.2.2", true, "qwen3");
    ((ObjectNode) b.get("metadata")).put("resourceVersion", "5");
    api.scriptHttpWatch(r -> events(event("ADDED", b), bookmark("20")));
    api.scriptHttpWatch(r -> events(goneEvent()));
    api.scriptHttpWatch(r -> status(410, "too old resource version"));

    source = podSource(api.config()).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    // The 410 relists; the store never had b, so the relisted set drops it.
    deliveries.awaitIds("llm/vllm-a");
    awaitHttpWatches(4);

    List<RecordedRequest> watches = httpWatches();
    Map<String, String> first = query(watches.get(0));
    assertThat(first).containsEntry("watch", "true").containsEntry("allowWatchBookmarks", "true")
        .containsEntry("labelSelector", "app=vllm").containsKey("timeoutSeconds");
    String listed = first.get("resourceVersion");
    assertThat(listed).isNotBlank();
    // After the bookmark, the watch resumes from the bookmark's version, without a list in between.
    assertThat(query(watches.get(1))).containsEntry("resourceVersion", "20");
    assertThat(lists()).hasSize(3); // first list, relist after the ERROR event, relist after the 410 status
    ResourceWatcher w = source.watchers().get(0);
    assertThat(w.stats().bookmarks()).isEqualTo(1);
    assertThat(w.stats().relistsAfterGone()).isEqualTo(2);
    assertThat(w.stats().lists()).isEqualTo(3);
    assertThat(query(watches.get(3)).get("resourceVersion")).isEqualTo(listed);
  }

  @Test
  void errorsAndDroppedConnectionsReconnectFromTheLastVersionWithoutRelisting() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    ObjectNode b = pod("vllm-b", "192.0.2.2", true, "qwen3");
    ((ObjectNode) b.get("metadata")).put("resourceVersion", "7");
    api.scriptHttpWatch(r -> status(500, "etcd is unhappy"));
    api.scriptHttpWatch(r -> status(503, "apiserver restarting"));

    source = podSource(api.config()).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    awaitHttpWatches(3); // two refused, then one held open
    Thread.sleep(100);
    int connections = api.proxy.accepted();
    api.scriptHttpWatch(r -> events(event("ADDED", b)));
    api.proxy.dropAll();
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");

    assertThat(api.proxy.accepted()).isGreaterThan(connections);
    assertThat(lists()).hasSize(1);
    List<RecordedRequest> watches = httpWatches();
    String version = query(watches.get(0)).get("resourceVersion");
    for (int i = 0; i < 4; i++) {
      assertThat(query(watches.get(i))).containsEntry("resourceVersion", version);
    }
    ResourceWatcher w = source.watchers().get(0);
    // 500 and 503; the cut connection had sent no response yet, and the JDK client retries such a GET itself.
    assertThat(w.stats().failures()).isGreaterThanOrEqualTo(2);
    assertThat(w.stats().relistsAfterGone()).isZero();
    // The endpoint stayed known throughout.
    assertThat(deliveries.last()).isNotEmpty();
  }

  @Test
  void aSilentWatchIsPresumedDeadAndReplaced() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    source = podSource(api.config()).idleTimeout(Duration.ofMillis(300)).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    awaitHttpWatches(3);
    assertThat(lists()).hasSize(1);
  }

  @Test
  void malformedEventsAreReportedAndTheWatchResumes() throws Exception {
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    ObjectNode b = pod("vllm-b", "192.0.2.2", true, "qwen3");
    api.scriptHttpWatch(r -> events("{\"type\":\"ADDED\",\"object\":{\"metadata\":"));
    api.scriptHttpWatch(r -> events(event("ADDED", b)));
    source = podSource(api.config()).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a", "llm/vllm-b");
    assertThat(source.watchers().get(0).stats().failures()).isEqualTo(1);
  }

  @Test
  void aRotatedTokenIsReadAgainAfterA401(@TempDir Path dir) throws Exception {
    Path tokenFile = dir.resolve("token");
    Files.writeString(tokenFile, "first-token\n");
    KubernetesConfig config = KubernetesConfig.builder(api.uri()).tokenFile(tokenFile).build();
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    // The kubelet rotated the token; the server now refuses the old one once.
    api.once(r -> ApiServerFixture.isWatch(r), r -> {
      try {
        Files.writeString(tokenFile, "second-token\n");
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return status(401, "Unauthorized");
    });
    source = podSource(config).build();
    source.start(deliveries);
    deliveries.awaitIds("llm/vllm-a");
    awaitHttpWatches(2);
    List<RecordedRequest> watches = httpWatches();
    assertThat(lists().get(0).getHeader("Authorization")).isEqualTo("Bearer first-token");
    assertThat(watches.get(0).getHeader("Authorization")).isEqualTo("Bearer first-token");
    assertThat(watches.get(1).getHeader("Authorization")).isEqualTo("Bearer second-token");
  }
}
