package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.limits.InMemoryRateLimitStore;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.ResilientStateStore;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import dev.kinference.state.redis.RedisStateStore;
import dev.kinference.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two gateway replicas' routers sharing one real Redis server through {@link PeerPrefillSharing}: each sees the
 * prompts the other has in a server's prefill after one interval, a replica that stops publishing is forgotten
 * after the time-to-live, and a Redis killed mid-run takes the peers' shares to 0 while routing goes on.
 */
class PeerPrefillSharingTest {

  static final String MODEL = "qwen3-8b";
  static final Duration INTERVAL = Duration.ofMillis(50);
  static RedisServer redis;
  final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
  }

  /** One gateway replica: its own router (own fleet view and account) and its own client of the store. */
  record Replica(Router router, PeerPrefillSharing sharing) {
    EndpointState state(String id) {
      return Objects.requireNonNull(router.fleet().get(id));
    }
  }

  Replica replica(String name, RateLimitStore store) {
    List<Endpoint> endpoints = List.of(Endpoint.of("e0", "http://127.0.0.1:8000", MODEL),
        Endpoint.of("e1", "http://127.0.0.1:8001", MODEL));
    Router router = Router.builder().endpoints(endpoints).build();
    open.add(router);
    PeerPrefillSharing sharing = PeerPrefillSharing.start(router.fleet(), store, name, INTERVAL);
    open.add(sharing);
    return new Replica(router, sharing);
  }

  RedisStateStore redisStore(String prefix) {
    RedisStateStore store = unownedRedisStore(prefix);
    open.add(store);
    return store;
  }

  /** A store the test does not close (a gateway that is given it does). */
  static RedisStateStore unownedRedisStore(String prefix) {
    return RedisStateStore.builder(redis.uri()).keyPrefix(prefix).timeout(Duration.ofMillis(200)).build();
  }

  static InferenceRequest longPrompt(String topic) {
    return InferenceRequest.builder(MODEL).system("You answer questions about " + topic + ".")
        .user(("a long question about " + topic + " ").repeat(60)).build();
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  @Test
  void replicasSeeEachOthersPendingPrefillAfterOneInterval() throws Exception {
    Replica a = replica("a", redisStore("t1:"));
    Replica b = replica("b", redisStore("t1:"));
    RoutingDecision sent = a.router().route(longPrompt("tides"));
    String id = sent.endpoint().id();
    long tokens = sent.uncachedTokens();
    assertThat(tokens).isPositive();

    await("b sees a's pending prefill at " + id, () -> b.state(id).peerPendingPrefillTokens() == tokens);
    assertThat(b.state(id).estimatedPendingPrefillTokens()).isGreaterThanOrEqualTo(tokens);
    assertThat(b.state(id).pendingPrefillTokens()).as("b's own account is unchanged").isZero();
    // a does not count its own tokens twice
    assertThat(a.state(id).peerPendingPrefillTokens()).isZero();

    RoutingDecision other = b.router().route(longPrompt("volcanoes"));
    String otherId = other.endpoint().id();
    await("a sees b's pending prefill", () -> a.state(otherId).peerPendingPrefillTokens() == other.uncachedTokens());

    sent.reportFirstToken();
    await("b forgets a's prompt once its first token came",
        () -> b.state(id).peerPendingPrefillTokens() == 0);
    other.reportFirstToken();
    sent.reportFinished(Usage.UNKNOWN);
    other.reportFinished(Usage.UNKNOWN);
  }

  @Test
  void aReplicaThatStopsPublishingIsForgottenAfterTheTtl() throws Exception {
    Replica a = replica("a", redisStore("t2:"));
    Replica b = replica("b", redisStore("t2:"));
    RoutingDecision sent = a.router().route(longPrompt("glaciers"));
    String id = sent.endpoint().id();
    await("b sees a's share", () -> b.state(id).peerPendingPrefillTokens() == sent.uncachedTokens());

    long stopped = System.nanoTime();
    a.sharing().close(); // a dies with its request still waiting for a first token
    await("a's share lapses", () -> b.state(id).peerPendingPrefillTokens() == 0);
    assertThat(Duration.ofNanos(System.nanoTime() - stopped))
        .as("a share counts until its time-to-live").isGreaterThanOrEqualTo(b.sharing().ttl().minusMillis(100));
  }

  @Test
  void redisKilledMidRunTakesPeerSharesToZeroAndRoutingContinues() throws Exception {
    Replica a = replica("a", redisStore("t3:"));
    Replica b = replica("b", redisStore("t3:"));
    RoutingDecision sent = a.router().route(longPrompt("deserts"));
    String id = sent.endpoint().id();
    await("b sees a's share", () -> b.state(id).peerPendingPrefillTokens() == sent.uncachedTokens());

    redis.kill();
    try {
      await("the peers' shares fall to 0 without the store", () -> b.state(id).peerPendingPrefillTokens() == 0);
      // both replicas keep routing on their own accounts
      for (int i = 0; i < 5; i++) {
        RoutingDecision d = b.router().route(longPrompt("rivers " + i));
        assertThat(d.endpoint().id()).isIn("e0", "e1");
        d.reportFirstToken();
        d.reportFinished(Usage.UNKNOWN);
      }
      assertThat(a.router().route(longPrompt("lakes")).endpoint().id()).isIn("e0", "e1");
    } finally {
      redis.restart();
    }
    await("sharing resumes when Redis is back", () -> b.state(id).peerPendingPrefillTokens() >= sent.uncachedTokens());
  }

  @Test
  void inMemoryStoreSharesBetweenReplicasInOneProcess() throws Exception {
    InMemoryRateLimitStore store = new InMemoryRateLimitStore();
    Replica a = replica("a", store);
    Replica b = replica("b", store);
    RoutingDecision sent = a.router().route(longPrompt("comets"));
    String id = sent.endpoint().id();
    await("b sees a's share", () -> b.state(id).peerPendingPrefillTokens() == sent.uncachedTokens());
    assertThatThrownBy(() -> store.sharePendingPrefillTokens("c", Map.of("e0", -1L), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
    assertThat(store.sharePendingPrefillTokens("c", Map.of("e0", 5L), Duration.ofSeconds(1)))
        .as("the others' shares, untouched by the refused call").containsEntry("e0", id.equals("e0") ? sent.uncachedTokens() : 0L);
  }

  @Test
  void aGatewaySharesOnlyAsOneOfSeveralPreciseReplicasOverASharedStore() throws Exception {
    String yaml = TestPolicies.pool(MODEL, Map.of("e0", "http://127.0.0.1:9"));
    record Setup(int replicas, boolean precise, boolean sharedStore, boolean shares, boolean turnedOff) {
      Setup(int replicas, boolean precise, boolean sharedStore, boolean shares) {
        this(replicas, precise, sharedStore, shares, false);
      }
    }
    List<Setup> setups = List.of(new Setup(3, true, true, true), new Setup(1, true, true, false),
        // --no-prefill-sharing: independent replicas over the same store, what the replicas benchmark compares with
        new Setup(3, true, true, false, true),
        // an approximate index learns only from its own decisions: the others' load would outweigh it
        new Setup(3, false, true, false),
        // a store in this process's memory has no peers
        new Setup(3, true, false, false));
    for (Setup s : setups) {
      PolicyGateway.Builder b = PolicyGateway.builder().config(PolicyLoader.load(yaml, "p.yaml").orThrow())
          .routerReplicas(s.replicas()).preciseIndex(s.precise()).peerPrefillSharing(!s.turnedOff())
          .gateway(gw -> gw.port(0).accessLog(false));
      if (s.sharedStore()) {
        b.stateStore(ResilientStateStore.builder(unownedRedisStore("t5:")).build());
      }
      try (PolicyGateway g = b.build()) {
        assertThat(g.sharesInFlightPrefill()).as(s.toString()).isEqualTo(s.shares());
      }
    }
  }
}
