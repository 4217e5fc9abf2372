package dev.kinference.epp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.gateway.GovernanceGuard;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.limits.ResilientStateStore;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.state.redis.RedisStateStore;
import dev.kinference.testkit.RedisServer;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two {@code kinference epp} pickers (each a {@link PolicyGateway} with a precise index, told it is one of two, over
 * one real Redis server, and an {@link EndpointPicker} on its own gRPC port) in front of the same two simulated vLLM
 * servers: a prompt one picker sent is counted by the other as in a server's prefill until the proxy streams its
 * first token; with Redis killed each picker keeps picking on its own account and says so in one log line.
 */
class EppPeerPrefillSharingTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static RedisServer redis;
  static final List<SimulatedServer> sims = new ArrayList<>();
  final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void start() {
    redis = RedisServer.start();
    for (int i = 0; i < 2; i++) {
      sims.add(SimulatedServer.builder(MODEL).name("sim-" + i).start());
    }
  }

  @AfterAll
  static void stop() {
    sims.forEach(SimulatedServer::close);
    redis.close();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
  }

  /** One picker replica: its own fleet view and account, its own client of the store, its own ext_proc port. */
  record Picker(PolicyGateway pg, ManagedChannel channel) {
    EndpointState state(String id) {
      return Objects.requireNonNull(pg.fleet().get(id));
    }

    /** The endpoint id of a {@code host:port} the picker named. */
    String idOf(String hostPort) {
      return pg.fleet().endpoints().stream().filter(s -> {
        URI u = s.endpoint().uri();
        return (u.getHost() + ":" + u.getPort()).equals(hostPort);
      }).map(EndpointState::id).findFirst().orElseThrow();
    }
  }

  Picker picker(String keyPrefix) throws Exception {
    StringBuilder yaml = new StringBuilder("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: local}
        spec:
          model: %s
          endpoints:
        """.formatted(MODEL));
    for (SimulatedServer s : sims) {
      yaml.append("    - id: ").append(s.name()).append("\n      url: ").append(s.baseUri()).append('\n');
    }
    RedisStateStore store = RedisStateStore.builder(redis.uri()).keyPrefix(keyPrefix)
        .timeout(Duration.ofMillis(200)).build();
    PolicyGateway pg = PolicyGateway.builder().config(PolicyLoader.load(yaml.toString(), "pool.yaml").orThrow())
        .preciseIndex(true).routerReplicas(2).stateStore(ResilientStateStore.builder(store).build()).build();
    open.add(pg);
    assertThat(pg.sharesInFlightPrefill()).isTrue();
    await("the servers are healthy", () -> pg.fleet().endpoints().stream().allMatch(e -> e.health() == Health.HEALTHY));
    EndpointPicker picker = EndpointPicker.builder().router(pg.router()).guard(GovernanceGuard.of(pg.governance()))
        .build();
    EppServer server = EppServer.start(picker, "127.0.0.1", 0);
    open.add(server);
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    open.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return new Picker(pg, channel);
  }

  /** A streamed chat request whose prompt no server has cached. */
  static String longChat(String topic) {
    return "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":8,\"messages\":[{\"role\":\"user\","
        + "\"content\":\"" + ("a long question about " + topic + " ").repeat(60) + "\"}]}";
  }

  /** One request's ext_proc stream and the endpoint the picker chose for it. */
  record Picked(EndpointPickerGovernanceTest.Call call, String endpoint) {}

  /** Sends a request's headers and body to the picker, as Envoy does, and reads which endpoint it picked. */
  static Picked pick(Picker p, String body) throws InterruptedException {
    EndpointPickerGovernanceTest.Call call = new EndpointPickerGovernanceTest.Call(p.channel());
    call.requests.onNext(EndpointPickerTest.headers("/v1/chat/completions", null, null, false));
    call.requests.onNext(EndpointPickerTest.body(body, true));
    ProcessingResponse h = call.next();
    assertThat(h.hasImmediateResponse()).as("%s", h).isFalse();
    String destination = EndpointPickerTest.destination(
        h.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList());
    call.next(); // the streamed body, forwarded
    return new Picked(call, p.idOf(destination.split(",")[0]));
  }

  /** The proxy streams the server's first event and then the end: the picker reports the first token, then the end. */
  static void respond(Picked picked) throws InterruptedException {
    EndpointPickerGovernanceTest.Call call = picked.call();
    call.requests.onNext(EndpointPickerTest.responseHeaders(200, "text/event-stream"));
    call.next();
    call.requests.onNext(EndpointPickerTest.responseBody(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n", false));
    call.next();
    call.requests.onNext(EndpointPickerTest.responseBody("data: [DONE]\n\n", true));
    call.next();
    call.end();
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  @Test
  void eachPickerCountsThePromptsTheOtherHasInAServersPrefillUntilTheirFirstToken() throws Exception {
    Picker a = picker("epp1:");
    Picker b = picker("epp1:");
    Picked sent = pick(a, longChat("tides"));
    String id = sent.endpoint();
    long tokens = a.state(id).pendingPrefillTokens();
    assertThat(tokens).as("a's own account of the prompt it sent to " + id).isPositive();

    await("b counts a's prompt at " + id, () -> b.state(id).peerPendingPrefillTokens() == tokens);
    assertThat(b.state(id).estimatedPendingPrefillTokens()).isGreaterThanOrEqualTo(tokens);
    assertThat(b.state(id).pendingPrefillTokens()).as("b's own account is unchanged").isZero();
    assertThat(a.state(id).peerPendingPrefillTokens()).as("a does not count its own prompt twice").isZero();

    // b's next long prompt goes where a's is not in the prefill
    Picked other = pick(b, longChat("volcanoes"));
    String otherId = other.endpoint();
    assertThat(otherId).as("b steers clear of the server a just loaded").isNotEqualTo(id);
    long otherTokens = b.state(otherId).pendingPrefillTokens();
    await("a counts b's prompt", () -> a.state(otherId).peerPendingPrefillTokens() == otherTokens);

    respond(sent);
    await("b forgets a's prompt once its first token came", () -> b.state(id).peerPendingPrefillTokens() == 0);
    respond(other);
    await("a forgets b's prompt", () -> a.state(otherId).peerPendingPrefillTokens() == 0);
  }

  @Test
  void withRedisDeadEachPickerPicksOnItsOwnAccountAndSaysSoOnce() throws Exception {
    Picker a = picker("epp2:");
    Picker b = picker("epp2:");
    Picked sent = pick(a, longChat("deserts"));
    String id = sent.endpoint();
    long tokens = a.state(id).pendingPrefillTokens();
    await("b counts a's prompt", () -> b.state(id).peerPendingPrefillTokens() == tokens);

    PrintStream stderr = System.err;
    ByteArrayOutputStream logged = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new TeeStream(stderr, logged), true, StandardCharsets.UTF_8));
    try {
      redis.kill();
      await("b's count of a's prompt lapses without the store", () -> b.state(id).peerPendingPrefillTokens() == 0);
      assertThat(a.state(id).pendingPrefillTokens()).as("a keeps its own account").isEqualTo(tokens);
      // both go on picking; b only knows its own prompts now
      Picked more = pick(b, longChat("rivers"));
      assertThat(b.state(more.endpoint()).pendingPrefillTokens()).isPositive();
      respond(more);
      Picked again = pick(a, longChat("lakes"));
      respond(again);
      Thread.sleep(20 * 50); // twenty sharing intervals (the scrape interval, 50 ms) without the store
    } finally {
      System.setErr(stderr);
      redis.restart();
    }
    List<String> lines = logged.toString(StandardCharsets.UTF_8).lines()
        .filter(l -> l.contains("cannot share in-flight prefill")).toList();
    assertThat(lines).as("one line per picker for the whole outage").hasSize(2);
    await("sharing resumes when Redis is back", () -> b.state(id).peerPendingPrefillTokens() == tokens);
    respond(sent);
  }

  /** Writes to both streams: what the test reads and what the build log shows. */
  static final class TeeStream extends OutputStream {
    private final OutputStream first;
    private final OutputStream second;

    TeeStream(OutputStream first, OutputStream second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public void write(int b) throws java.io.IOException {
      first.write(b);
      synchronized (second) {
        second.write(b);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws java.io.IOException {
      first.write(b, off, len);
      synchronized (second) {
        second.write(b, off, len);
      }
    }
  }
}
