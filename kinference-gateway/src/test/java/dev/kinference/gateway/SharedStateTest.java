package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.ResilientStateStore;
import dev.kinference.policy.limits.StateStores;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.testkit.RedisServer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three gateways (in this JVM) sharing one real Redis server and three simulated vLLM servers, as three replicas
 * behind a Service: a tenant's limit holds across them, cut-off streams are charged, an exhausted budget stays
 * exhausted after every gateway restarts, and a Redis killed under load fails no request (failure mode open) or
 * refuses with 503 (closed), with the totals reconciled afterwards.
 */
class SharedStateTest {

  static final ObjectMapper M = new ObjectMapper();
  static final String KEY = "key-acme";
  static final String FRUGAL_KEY = "key-frugal";
  static final int MAX_TOKENS = 20;
  static final String ADMIN_KEY = "admin-secret";
  static final List<SimulatedServer> sims = new ArrayList<>();
  static RedisServer redis;
  static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final List<PolicyGateway> gateways = new ArrayList<>();

  static String config(String acmeLimits) {
    return TestPolicies.pool(Harness.MODEL, TestPolicies.endpoints(sims), "price: {input: 10.0, output: 30.0}")
        + TestPolicies.tenant("acme", KEY, "limits: {" + acmeLimits + "}")
        + TestPolicies.tenant("frugal", FRUGAL_KEY, "budget: {period: day, limit: 0.002, currency: USD}");
  }

  @BeforeAll
  static void start() {
    redis = RedisServer.start();
    for (int i = 0; i < 3; i++) {
      sims.add(SimulatedServer.builder(Harness.MODEL).name("sim-" + i).timeScale(4).kvEvents(false).start());
    }
  }

  @AfterAll
  static void stop() {
    sims.forEach(SimulatedServer::close);
    redis.close();
    http.shutdownNow();
  }

  @AfterEach
  void closeGateways() {
    gateways.forEach(PolicyGateway::close);
    gateways.clear();
  }

  /** Three gateways over {@code storeUri}, each with its own store client, as three processes would have. */
  void startGateways(String storeUri, String acmeLimits, ResilientStateStore.FailureMode mode) throws Exception {
    for (int i = 0; i < 3; i++) {
      RateLimitStore remote = StateStores.open(storeUri, null, Duration.ofMillis(300));
      RateLimitStore store = ResilientStateStore.builder(remote).failureMode(mode).replicas(() -> 3)
          .probeInterval(Duration.ofMillis(200)).build();
      gateways.add(PolicyGateway.builder()
          .config(PolicyLoader.load(config(acmeLimits), "shared.yaml").orThrow())
          .stateStore(store)
          .gateway(g -> g.port(0).accessLog(false).adminKey(ADMIN_KEY))
          .build().start());
    }
  }

  record Outcome(int status, int input, int output, String body) {}

  static Outcome chat(PolicyGateway g, String key, String question) throws Exception {
    String body = """
        {"model":"%s","max_tokens":%d,"messages":[{"role":"user","content":"%s"}]}"""
        .formatted(Harness.MODEL, MAX_TOKENS, question);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(g.gateway().uri() + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      return new Outcome(r.statusCode(), 0, 0, r.body());
    }
    JsonNode u = M.readTree(r.body()).path("usage");
    return new Outcome(200, u.path("prompt_tokens").asInt(), u.path("completion_tokens").asInt(), r.body());
  }

  /** The tenant's usage over the last hour as one total (summed over days, in case the test spans midnight). */
  static List<UsageTotal> totals(String storeUri, String tenant) {
    try (RateLimitStore s = StateStores.open(storeUri, null, Duration.ofSeconds(2))) {
      Instant now = Instant.now();
      return UsageReports.perTenant(s.usage(new UsageQuery(tenant, null, now.minus(Duration.ofHours(1)),
          now.plusSeconds(1), CalendarPeriod.DAY)));
    }
  }

  static void awaitRecorded(List<PolicyGateway> gs) throws InterruptedException {
    for (PolicyGateway g : gs) {
      Harness.awaitEveryRequestRecorded(g.gateway());
    }
  }

  /** The largest reservation one request makes: its estimated input plus max_tokens (generous estimate). */
  static final int ONE_RESERVATION = 60 + MAX_TOKENS;

  @Test
  void aTenantsTokenLimitHoldsAcrossThreeReplicas() throws Exception {
    String uri = redis.uri() + "/1";
    startGateways(uri, "tokensPerMinute: 5000", ResilientStateStore.FailureMode.OPEN);
    ExecutorService pool = Executors.newFixedThreadPool(64);
    List<Future<Map.Entry<Long, Outcome>>> futures = new ArrayList<>();
    long startNanos = System.nanoTime();
    for (int i = 0; i < 200; i++) {
      PolicyGateway g = gateways.get(i % 3);
      String q = "question number " + i + " about the shared limit";
      futures.add(pool.submit(() -> {
        Outcome o = chat(g, KEY, q);
        return Map.entry(System.nanoTime(), o);
      }));
    }
    long admitted = 0;
    long admittedInFirstMinute = 0;
    int ok = 0;
    int limited = 0;
    for (Future<Map.Entry<Long, Outcome>> f : futures) {
      Outcome o = f.get().getValue();
      if (o.status() == 200) {
        ok++;
        admitted += o.input() + o.output();
        // A request answered within a minute of the start was admitted within that minute, so these all count in
        // one window of the limit; on a machine slow enough for the run to outlast a minute, later ones may not.
        if (f.get().getKey() - startNanos < 60_000_000_000L) {
          admittedInFirstMinute += o.input() + o.output();
        }
      } else {
        assertThat(o.status()).as(o.body()).isEqualTo(429);
        limited++;
      }
    }
    pool.shutdown();
    awaitRecorded(gateways);
    int okCount = ok;
    long admittedTokens = admitted;
    System.out.printf("3 replicas, 5000 tokens/min: %d admitted (%d tokens), %d refused%n", ok, admitted, limited);
    assertThat(limited).as("the limit bites").isPositive();
    assertThat(admittedInFirstMinute).as("tokens admitted across the three replicas within one minute")
        .isLessThanOrEqualTo(5000 + ONE_RESERVATION);
    List<UsageTotal> t = totals(uri, "acme");
    assertThat(t).singleElement().satisfies(u -> {
      assertThat(u.requests()).isEqualTo(okCount);
      assertThat(u.totalTokens()).as("usage totals equal what the clients received").isEqualTo(admittedTokens);
    });
  }

  @Test
  void streamsCutAt90PercentAreEachChargedAndTheLimitHolds() throws Exception {
    String uri = redis.uri() + "/2";
    startGateways(uri, "tokensPerMinute: 5000", ResilientStateStore.FailureMode.OPEN);
    int maxTokens = 50;
    ExecutorService pool = Executors.newFixedThreadPool(32);
    AtomicInteger cut = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    AtomicLong relayed = new AtomicLong();
    List<Future<?>> futures = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      PolicyGateway g = gateways.get(i % 3);
      int n = i;
      futures.add(pool.submit(() -> {
        String body = """
            {"model":"%s","max_tokens":%d,"stream":true,"messages":[{"role":"user","content":"cut %d"}]}"""
            .formatted(Harness.MODEL, maxTokens, n);
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(
                URI.create(g.gateway().uri() + "/v1/chat/completions"))
            .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() != 200) {
          r.body().close();
          refused.incrementAndGet();
          return null;
        }
        int chunks = 0;
        try (InputStream in = r.body();
            BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
          String line;
          while ((line = lines.readLine()) != null) {
            if (line.startsWith("data: {") && line.contains("\"content\"")) {
              chunks++;
              if (chunks >= maxTokens * 9 / 10) {
                break; // the client goes away at 90%
              }
            }
          }
        }
        relayed.addAndGet(chunks);
        cut.incrementAndGet();
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    pool.shutdown();
    awaitRecorded(gateways);
    List<UsageTotal> t = totals(uri, "acme");
    System.out.printf("cut streams: %d cut, %d refused, %d chunks relayed; store: %s%n", cut.get(), refused.get(),
        relayed.get(), t);
    assertThat(refused.get()).as("the limit bites").isPositive();
    assertThat(t).singleElement().satisfies(u -> {
      assertThat(u.requests()).as("every cut stream is charged").isEqualTo(cut.get());
      // at least what the clients received; at most what the servers generated (a simulated chunk may carry more
      // than one token, so the chunks the clients counted are a lower bound, not the figure)
      assertThat(u.outputTokens()).as("the output relayed before the cut")
          .isBetween(relayed.get(), (long) cut.get() * maxTokens);
      assertThat(u.inputTokens()).as("the prompt, prefilled").isGreaterThanOrEqualTo(cut.get());
      assertThat(u.totalTokens()).as("the limit holds").isLessThanOrEqualTo(5000 + 60 + maxTokens);
    });
  }

  @Test
  void anExhaustedBudgetStaysExhaustedWhenEveryGatewayRestarts() throws Exception {
    String uri = redis.uri() + "/3";
    startGateways(uri, "tokensPerMinute: 100000", ResilientStateStore.FailureMode.OPEN);
    long received = 0;
    int ok = 0;
    Outcome last = null;
    for (int i = 0; i < 40 && (last == null || last.status() == 200); i++) {
      last = chat(gateways.get(i % 3), FRUGAL_KEY, "spend " + i);
      if (last.status() == 200) {
        ok++;
        received += last.input() + last.output();
      }
    }
    assertThat(last).isNotNull();
    assertThat(last.status()).as(last.body()).isEqualTo(429);
    assertThat(last.body()).contains("budget");
    awaitRecorded(gateways);
    closeGateways();
    startGateways(uri, "tokensPerMinute: 100000", ResilientStateStore.FailureMode.OPEN);
    for (PolicyGateway g : gateways) {
      Outcome again = chat(g, FRUGAL_KEY, "after the restart");
      assertThat(again.status()).as("still refused after a restart: %s", again.body()).isEqualTo(429);
    }
    int admitted = ok;
    long tokens = received;
    assertThat(totals(uri, "frugal")).singleElement().satisfies(u -> {
      assertThat(u.requests()).isEqualTo(admitted);
      assertThat(u.totalTokens()).isEqualTo(tokens);
      assertThat(u.cost()).isGreaterThan(0.0015);
    });
    // what any replica's admin API says: every replica's usage, this month by default
    HttpResponse<String> usage = admin(gateways.get(2), "/admin/usage?tenant=frugal&granularity=month", ADMIN_KEY);
    assertThat(usage.statusCode()).as(usage.body()).isEqualTo(200);
    JsonNode row = M.readTree(usage.body()).path("data").get(0);
    assertThat(row.path("tenant").asText()).isEqualTo("frugal");
    assertThat(row.path("requests").asLong()).isEqualTo(admitted);
    assertThat(row.path("totalTokens").asLong()).isEqualTo(tokens);
    assertThat(row.path("inputTokens").asLong() + row.path("outputTokens").asLong()).isEqualTo(tokens);
    assertThat(row.path("currency").asText()).isEqualTo("USD");
    assertThat(row.path("cost").asDouble()).isGreaterThan(0.0015);
    assertThat(row.has("from") && row.has("to") && row.has("cachedTokens")).isTrue();
    assertThat(admin(gateways.get(0), "/admin/usage", "wrong").statusCode()).isEqualTo(401);
    assertThat(admin(gateways.get(0), "/admin/usage", null).statusCode()).isEqualTo(401);
    HttpResponse<String> bad = admin(gateways.get(0), "/admin/usage?granularity=week", ADMIN_KEY);
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(M.readTree(bad.body()).path("error").path("message").asText()).contains("hour, day or month");
    assertThat(gateways.get(0).gateway().scrapeMetrics())
        .containsPattern("kinference_tenant_spend_month_to_date\\{tenant=\"frugal\",currency=\"USD\"} 0\\.00");
  }

  static HttpResponse<String> admin(PolicyGateway g, String pathAndQuery, @org.jspecify.annotations.Nullable String key)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(g.gateway().uri() + pathAndQuery)).GET();
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void redisKilledUnderLoad_failureModeOpen_failsNoRequestAndReconciles() throws Exception {
    try (RedisServer own = RedisServer.start()) {
      startGateways(own.uri(), "tokensPerMinute: 100000", ResilientStateStore.FailureMode.OPEN);
      ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
      ExecutorService pool = Executors.newFixedThreadPool(12);
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < 120; i++) {
        PolicyGateway g = gateways.get(i % 3);
        String q = "load " + i;
        futures.add(pool.submit(() -> outcomes.add(chat(g, KEY, q))));
        if (i == 40) {
          own.kill();
        }
        if (i == 90) {
          own.restart();
        }
        Thread.sleep(15);
      }
      for (Future<?> f : futures) {
        f.get();
      }
      pool.shutdown();
      assertThat(outcomes).allSatisfy(o -> assertThat(o.status()).as(o.body()).isEqualTo(200));
      awaitRecorded(gateways);
      long received = outcomes.stream().mapToLong(o -> o.input() + o.output()).sum();
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      List<UsageTotal> t = List.of();
      while (System.nanoTime() < deadline) {
        t = totals(own.uri(), "acme");
        if (!t.isEmpty() && t.get(0).requests() == outcomes.size()) {
          break;
        }
        Thread.sleep(100);
      }
      assertThat(t).as("reconciled after the restart").singleElement().satisfies(u -> {
        assertThat(u.requests()).isEqualTo(120);
        assertThat(u.totalTokens()).isEqualTo(received);
      });
    }
  }

  @Test
  void redisDown_eachReplicaHoldsItsShare_andFailureModeClosedRefusesWith503() throws Exception {
    try (RedisServer own = RedisServer.start()) {
      startGateways(own.uri(), "tokensPerMinute: 1500", ResilientStateStore.FailureMode.OPEN);
      own.kill();
      long admitted = 0;
      for (int i = 0; i < 30; i++) {
        Outcome o = chat(gateways.get(0), KEY, "share " + i);
        if (o.status() == 200) {
          admitted += o.input() + o.output();
        } else {
          assertThat(o.status()).as(o.body()).isEqualTo(429);
          assertThat(o.body()).contains("this replica's share");
        }
      }
      assertThat(admitted).as("one replica's share: 1500 / 3").isLessThanOrEqualTo(500 + ONE_RESERVATION)
          .isPositive();
      closeGateways();
      startGateways(own.uri(), "tokensPerMinute: 1500", ResilientStateStore.FailureMode.CLOSED);
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(
              URI.create(gateways.get(1).gateway().uri() + "/v1/chat/completions"))
          .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + Harness.MODEL
              + "\",\"messages\":[{\"role\":\"user\",\"content\":\"closed\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("retry-after")).contains("1");
      JsonNode error = M.readTree(r.body()).path("error");
      assertThat(error.path("message").asText()).contains("state store");
      assertThat(error.path("type").asText()).isNotEmpty();
      assertThat(gateways.get(1).gateway().scrapeMetrics()).contains("kinference_state_store_up 0")
          .contains("kinference_state_store_info{store=\"redis\",failure=\"closed\"} 1");
    }
  }
}
