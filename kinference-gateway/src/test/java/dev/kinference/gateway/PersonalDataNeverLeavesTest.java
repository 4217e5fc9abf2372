package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.endpoint.Saturation;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 21's guarantee end to end: a request carrying personal data anywhere (user, metadata, a message name, a
 * tool definition, an image URL, a binary image, an Anthropic system block, the text) never reaches the cloud,
 * while the local pool is saturated, the alias has a chain of cloud fallbacks, the configuration is hot-reloaded
 * continuously between three variants, one local server goes away and comes back (retries), and the gateway queue
 * times out. Personal requests get 200 from a local
 * server or 503 in their API's error format; clean requests overflow to the cloud.
 */
class PersonalDataNeverLeavesTest {

  static final ObjectMapper M = new ObjectMapper();
  static final String EMAIL = "jane.doe@example.com";
  static final String PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";

  static String base(List<SimulatedServer> sims, FakeCloud cloud) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: local}
        spec:
          model: %s
          endpoints:
            - {id: sim-0, url: "%s"}
            - {id: sim-1, url: "%s"}
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: cloud}
        spec:
          api: anthropic
          baseUrl: "%s"
          apiKey: {env: TEST_CLOUD_KEY}
          models: [{name: claude-x, price: {input: 3.0, output: 15.0}}]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: cloud-openai}
        spec:
          api: openai
          baseUrl: "%s/v1"
          apiKey: {env: TEST_CLOUD_KEY}
          models: [{name: gpt-x, price: {input: 2.0, output: 8.0}}]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: cloud-chat}
        spec:
          targets: [{provider: cloud-openai, model: gpt-x}]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: chat}
        spec:
          model: chat
          targets: [{pool: local}]
          fallback:
            - {provider: cloud, model: claude-x}
            - {alias: cloud-chat}
        """.formatted(Harness.MODEL, sims.get(0).baseUri(), sims.get(1).baseUri(), cloud.baseUrl(), cloud.baseUrl());
  }

  /** Three policies the configuration is switched between while requests run. */
  static final List<String> VARIANTS = List.of("""
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePolicy
      metadata: {name: default}
      spec:
        rules:
          - name: personal-data-stays-local
            match: {personalData: true}
            action: {requireLocal: true, onSaturation: queue}
      """, """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePolicy
      metadata: {name: default}
      spec:
        personalData: {unknownContent: local}
        rules:
          - name: everything-may-burst
            action:
              fallback: [{alias: cloud-chat}, {provider: cloud, model: claude-x}]
      """, """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePolicy
      metadata: {name: default}
      spec:
        rules:
          - name: refuse-when-full
            match: {personalData: true}
            action: {onSaturation: reject, retryAfter: 1s}
      """);

  record Sent(String id, boolean personal, boolean anthropic, String what, String body) {}

  static String openAi(String id, String extra, String content) {
    return "{\"model\":\"chat\",\"max_tokens\":12" + extra + ",\"messages\":[{\"role\":\"user\",\"content\":"
        + content.replace("$ID", id) + "}]}";
  }

  static Sent personal(int i) {
    String id = "req-P" + i;
    String q = "\"Summarise my account, " + id + ".\"";
    return switch (i % 8) {
      case 0 -> new Sent(id, true, false, "user", openAi(id, ",\"user\":\"" + EMAIL + "\"", q));
      case 1 -> new Sent(id, true, false, "metadata", openAi(id, ",\"metadata\":{\"customer_email\":\"" + EMAIL
          + "\"}", q));
      case 2 -> new Sent(id, true, false, "message name", "{\"model\":\"chat\",\"max_tokens\":12,\"messages\":"
          + "[{\"role\":\"user\",\"name\":\"" + EMAIL + "\",\"content\":" + q + "}]}");
      case 3 -> new Sent(id, true, false, "tool definition", openAi(id, ",\"tools\":[{\"type\":\"function\","
          + "\"function\":{\"name\":\"mail\",\"description\":\"Mails " + EMAIL + "\",\"parameters\":{\"type\":"
          + "\"object\",\"properties\":{}}}}]", q));
      case 4 -> new Sent(id, true, false, "image URL", openAi(id, "", "[{\"type\":\"text\",\"text\":" + q + "},"
          + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://img.example.com/a.png?owner=jane.doe%40example"
          + ".com\"}}]"));
      case 5 -> new Sent(id, true, false, "binary data URL", openAi(id, "", "[{\"type\":\"text\",\"text\":" + q
          + "},{\"type\":\"image_url\",\"image_url\":{\"url\":\"" + PNG + "\"}}]"));
      case 6 -> new Sent(id, true, true, "anthropic system block", "{\"model\":\"chat\",\"max_tokens\":12,"
          + "\"system\":[{\"type\":\"text\",\"text\":\"The customer is " + EMAIL + "\"}],\"messages\":[{\"role\":"
          + "\"user\",\"content\":" + q + "}]}");
      default -> new Sent(id, true, false, "text, streamed", openAi(id, ",\"stream\":true", "\"Write to " + EMAIL
          + " about " + id + ".\""));
    };
  }

  static Sent clean(int i) {
    String id = "req-C" + i;
    String q = "\"What is the capital of France? " + id + "\"";
    return i % 2 == 0 ? new Sent(id, false, false, "clean", openAi(id, ",\"user\":\"u-" + i + "\"", q))
        : new Sent(id, false, true, "clean", "{\"model\":\"chat\",\"max_tokens\":12,\"system\":\"Be brief.\","
            + "\"messages\":[{\"role\":\"user\",\"content\":" + q + "}]}");
  }

  @Test
  void personalDataNeverReachesTheCloudUnderSaturationRetriesFallbacksReloadsAndQueueTimeouts() throws Exception {
    List<SimulatedServer> sims = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      sims.add(SimulatedServer.builder(Harness.MODEL).name("sim-" + i).defaultOutputTokens(12).timeScale(3)
          .engine(e -> e.maxNumSeqs(2)).kvEvents(false).start());
    }
    FakeCloud cloud = new FakeCloud();
    String base = base(sims, cloud);
    List<PolicyConfig> variants = new ArrayList<>();
    for (String v : VARIANTS) {
      variants.add(PolicyLoader.load(base + "---\n" + v, "variant.yaml").orThrow());
    }
    AtomicBoolean reloading = new AtomicBoolean(true);
    AtomicInteger reloads = new AtomicInteger();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    ExecutorService clients = Executors.newFixedThreadPool(24);
    PolicyGateway pg = PolicyGateway.builder()
        .config(variants.get(0))
        .configFeed(apply -> {
          Thread t = Thread.ofPlatform().daemon().name("config-reloader").start(() -> {
            for (int i = 1; reloading.get(); i++) {
              apply.accept(variants.get(i % variants.size()));
              reloads.incrementAndGet();
              try {
                Thread.sleep(3);
              } catch (InterruptedException e) {
                return;
              }
            }
          });
          return () -> {
            reloading.set(false);
            t.join();
          };
        })
        .environment(Map.of("TEST_CLOUD_KEY", FakeCloud.KEY)::get)
        .saturation(new Saturation(0, 0.8, Duration.ofMillis(500)))
        .scrapeInterval(Duration.ofMillis(50))
        .gateway(g -> g.port(0).queueMaxWait(Duration.ofSeconds(1)).debugHeaders(true))
        .build().start();
    try {
      List<Sent> all = new ArrayList<>();
      for (int i = 0; i < 96; i++) {
        all.add(personal(i));
        all.add(clean(i));
      }
      // Retries: one local server goes away for a while and comes back.
      Thread outage = Thread.ofPlatform().daemon().name("outage").start(() -> {
        try {
          Thread.sleep(400);
          sims.get(1).kill(SimulatedServer.KillMode.UNREACHABLE);
          Thread.sleep(1200);
          sims.get(1).restart();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (Sent s : all) {
        answers.add(clients.submit(() -> http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri()
                + (s.anthropic() ? "/v1/messages" : "/v1/chat/completions")))
            .header("Content-Type", "application/json").header("anthropic-version", "2023-06-01")
            .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(s.body())).build(),
            HttpResponse.BodyHandlers.ofString())));
      }
      int personalServedLocally = 0;
      int personalRefused = 0;
      for (int i = 0; i < all.size(); i++) {
        Sent s = all.get(i);
        HttpResponse<String> r = answers.get(i).get();
        String where = r.headers().firstValue("x-kinference-endpoint").orElse("");
        if (!s.personal()) {
          assertThat(r.statusCode()).as("%s %s: %s", s.id(), s.what(), r.body()).isIn(200, 503);
          continue;
        }
        assertThat(r.statusCode()).as("%s (%s): %s", s.id(), s.what(), r.body()).isIn(200, 503);
        if (r.statusCode() == 200) {
          assertThat(where).as("%s (%s) served by", s.id(), s.what()).startsWith("sim-");
          personalServedLocally++;
        } else {
          JsonNode error = M.readTree(r.body());
          if (s.anthropic()) {
            assertThat(error.path("type").asText()).isEqualTo("error");
            assertThat(error.path("error").path("type").asText()).isNotBlank();
          } else {
            assertThat(error.path("error").path("message").asText()).as(r.body()).isNotBlank();
            assertThat(error.path("error").path("type").asText()).isNotBlank();
          }
          assertThat(r.headers().firstValue("retry-after")).isPresent();
          assertThat(r.body()).doesNotContain(EMAIL);
          personalRefused++;
        }
      }
      outage.join();
      // What the cloud saw: clean requests only.
      List<String> bodies = cloud.seen.stream().map(x -> x.body().toString()).toList();
      assertThat(bodies).as("requests the cloud received").noneMatch(b -> b.contains("req-P"))
          .noneMatch(b -> b.contains(EMAIL)).noneMatch(b -> b.contains("jane.doe%40"))
          .noneMatch(b -> b.contains("iVBORw0KGgo"));
      assertThat(bodies).as("clean requests overflowed to the cloud").anyMatch(b -> b.contains("req-C"));
      assertThat(personalServedLocally).as("personal requests served locally").isPositive();
      assertThat(reloads.get()).as("configuration reloads while requests ran").isGreaterThan(20);
      System.out.printf("personal: %d served locally, %d refused (503); cloud received %d clean; %d reloads%n",
          personalServedLocally, personalRefused, bodies.size(), reloads.get());
    } finally {
      clients.shutdownNow();
      pg.close();
      cloud.close();
      sims.forEach(SimulatedServer::close);
      http.shutdownNow();
    }
  }
}
