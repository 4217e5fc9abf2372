package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.accounting.UsageRecord;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression: a non-streaming request whose HTTP/1.1 client went away kept generating upstream (25 s after the
 * client left) and was charged in full. Now the upstream request is cancelled within a second and the request is
 * charged like a cut stream: its prompt, and no output relayed.
 */
class ClientDisconnectTest {

  static SimulatedServer sim;
  static PolicyGateway pg;

  @BeforeAll
  static void start() throws Exception {
    // one token every ~50 ms of wall time: 2,000 tokens take far longer than the test waits
    sim = SimulatedServer.builder(Harness.MODEL).name("slow").timeScale(0.5).kvEvents(false).start();
    String yaml = TestPolicies.pool(Harness.MODEL, TestPolicies.endpoints(List.of(sim)))
        + TestPolicies.tenant("acme", "k", "limits: {tokensPerMinute: 100000}")
        + TestPolicies.tenant("beta", "k2", "limits: {tokensPerMinute: 100000}");
    pg = PolicyGateway.builder().config(PolicyLoader.load(yaml, "disconnect.yaml").orThrow())
        .gateway(g -> g.port(0)).build().start();
  }

  @AfterAll
  static void stop() {
    pg.close();
    sim.close();
  }

  static double running() {
    Matcher m = Pattern.compile("(?m)^vllm:num_requests_running\\{[^}]*} ([0-9.]+)").matcher(sim.metrics());
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }

  @Test
  void aNonStreamingClientThatLeavesCancelsTheUpstreamWithinASecondAndIsChargedItsPrompt() throws Exception {
    String body = "{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":2000,\"messages\":[{\"role\":\"user\","
        + "\"content\":\"write a very long story\"}]}";
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    int port = pg.gateway().uri().getPort();
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = s.getOutputStream();
      out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n"
          + "Content-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.write(bytes);
      out.flush();
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (running() < 1 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(running()).as("generating upstream").isEqualTo(1);
      Thread.sleep(500);
    } // the client goes away
    long left = System.nanoTime();
    while (running() > 0 && System.nanoTime() - left < Duration.ofSeconds(5).toNanos()) {
      Thread.sleep(20);
    }
    Duration cancelledAfter = Duration.ofNanos(System.nanoTime() - left);
    assertThat(running()).isZero();
    assertThat(cancelledAfter).as("upstream cancelled after the client left").isLessThan(Duration.ofSeconds(1));
    Harness.awaitEveryRequestRecorded(pg.gateway());
    List<UsageRecord> records = pg.governance().accounting().snapshot().query("acme", null);
    assertThat(records).singleElement().satisfies(r -> {
      assertThat(r.requests()).isEqualTo(1);
      assertThat(r.errors()).as("recorded as cut off").isEqualTo(1);
      assertThat(r.inputTokens()).as("the prompt, which the server prefilled").isPositive();
      assertThat(r.outputTokens()).as("nothing was relayed").isZero();
    });
    assertThat(pg.gateway().scrapeMetrics()).contains("error_type=\"client_disconnect\"");
  }

  /**
   * Regression: every client that left a stream before its first byte cost one Jetty {@code writeError: status=500 ... client
   * disconnected} WARN line, so a tenant could fill the log by disconnecting; it is counted, not logged.
   */
  @Test
  void aStreamingClientThatLeavesBeforeItsFirstTokenIsCountedWithoutAWarningLine() throws Exception {
    String body = "{\"model\":\"" + Harness.MODEL + "\",\"stream\":true,\"max_tokens\":2000,\"messages\":[{\"role\":"
        + "\"user\",\"content\":\"" + "word ".repeat(6000) + "\"}]}"; // a prefill that outlasts the client
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    int port = pg.gateway().uri().getPort();
    PrintStream stderr = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k2\r\n"
            + "Content-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
        Thread.sleep(300);
      } // the client goes away before its first token
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (running() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      Harness.awaitEveryRequestRecorded(pg.gateway());
      Thread.sleep(200); // Jetty logs, if it does, as it ends the exchange
    } finally {
      System.setErr(stderr);
    }
    assertThat(pg.gateway().scrapeMetrics()).contains("error_type=\"client_disconnect\"");
    assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("writeError").doesNotContain("WARN");
  }
}
