package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Regression: a client sending one byte a second stayed connected after 75 s and a stalled body got 408 only after
 * 605 s, so such connections piled up. Now 3,000 connections trickling their headers a byte a second leave a normal
 * request's latency as it was, and each is answered 408 (an error object) at the header deadline and closed; a
 * trickled body gets 408 at the body deadline.
 */
class SlowClientTest {

  static final String HEAD = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      + "application/json\r\nContent-Length: 90\r\nX-Padding: " + "p".repeat(200) + "\r\n\r\n";

  static long normalRequestMillis(HttpClient http, URI uri) throws Exception {
    long[] ms = new long[15];
    for (int i = 0; i < ms.length; i++) {
      long t0 = System.nanoTime();
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":3,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hello " + i + "\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      ms[i] = (System.nanoTime() - t0) / 1_000_000;
    }
    Arrays.sort(ms);
    return ms[ms.length / 2];
  }

  @Test
  void threeThousandSlowClientsNeitherDelayOthersNorStay() throws Exception {
    try (Harness h = Harness.builder().servers(1)
        .gateway(g -> g.clientTimeouts(Duration.ofSeconds(3), Duration.ofSeconds(3))).start();
        HttpClient http = HttpClient.newHttpClient()) {
      URI uri = URI.create(h.gateway.uri() + "/v1/chat/completions");
      long before = normalRequestMillis(http, uri);
      InetSocketAddress address = new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), h.gateway.uri().getPort());
      List<SocketChannel> slow = new ArrayList<>();
      byte[] head = HEAD.getBytes(StandardCharsets.US_ASCII);
      try {
        // Each connection's header deadline runs from its first byte, sent as it opens: the first opened is due
        // soonest, up to the whole opening loop before `start` on a loaded machine.
        long firstByte = System.nanoTime();
        for (int i = 0; i < 3000; i++) {
          SocketChannel c = SocketChannel.open(address);
          c.write(ByteBuffer.wrap(head, 0, 1));
          c.configureBlocking(false);
          slow.add(c);
        }
        long start = System.nanoTime();
        long during = normalRequestMillis(http, uri);
        int[] sent = new int[slow.size()];
        Arrays.fill(sent, 1);
        StringBuilder[] got = new StringBuilder[slow.size()];
        boolean[] closed = new boolean[slow.size()];
        long[] closedAt = new long[slow.size()];
        ByteBuffer in = ByteBuffer.allocate(4096);
        while (System.nanoTime() - start < Duration.ofSeconds(8).toNanos()) {
          for (int i = 0; i < slow.size(); i++) {
            if (closed[i]) {
              continue;
            }
            SocketChannel c = slow.get(i);
            in.clear();
            int n;
            try {
              n = c.read(in);
            } catch (java.io.IOException e) {
              n = -1;
            }
            if (n > 0) {
              if (got[i] == null) {
                got[i] = new StringBuilder();
              }
              got[i].append(new String(in.array(), 0, n, StandardCharsets.UTF_8));
            } else if (n < 0) {
              closed[i] = true;
              closedAt[i] = System.nanoTime() - start;
            }
          }
          // One byte a second each (the headers never complete within the deadline), and none from half a second
          // before the first connection's deadline: a byte arriving as the gateway closes is unread there, so the
          // close goes out as a reset, which can drop the 408 already sent (regression: 2,759 of 3,000 seen in CI,
          // twice; the second time the cut-off was counted from `start`, after the opening loop, and the first
          // connections opened were already past their deadline when the last bytes reached them).
          long elapsed = System.nanoTime() - start;
          if (elapsed / 1_000_000_000L >= sent[0] && sent[0] < head.length
              && System.nanoTime() - firstByte < Duration.ofMillis(2500).toNanos()) {
            for (int i = 0; i < slow.size(); i++) {
              if (!closed[i]) {
                try {
                  slow.get(i).write(ByteBuffer.wrap(head, sent[i], 1));
                } catch (java.io.IOException e) {
                  closed[i] = true;
                  closedAt[i] = System.nanoTime() - start;
                }
                sent[i]++;
              }
            }
          }
          Thread.sleep(20);
        }
        int answered408 = 0;
        int closedCount = 0;
        long latest = 0;
        for (int i = 0; i < slow.size(); i++) {
          if (got[i] != null && got[i].toString().startsWith("HTTP/1.1 408") && got[i].toString().contains(
              "\"error\"")) {
            answered408++;
          }
          if (closed[i]) {
            closedCount++;
            latest = Math.max(latest, closedAt[i]);
          }
        }
        System.out.printf("normal request p50: %d ms before, %d ms during 3000 slow connections; %d answered 408, "
            + "%d closed, the last at %.1f s%n", before, during, answered408, closedCount, latest / 1e9);
        assertThat(closedCount).as("every slow connection closed").isEqualTo(3000);
        assertThat(answered408).as("with 408 and an error object").isEqualTo(3000);
        assertThat(Duration.ofNanos(latest)).as("at the deadline (3 s) plus a sweep").isLessThan(Duration.ofSeconds(7));
        assertThat(during).as("a normal request's latency while they trickle").isLessThan(before + 250);
      } finally {
        for (SocketChannel c : slow) {
          c.close();
        }
      }
    }
  }

  @Test
  void aTrickledBodyGets408AtTheBodyDeadline() throws Exception {
    try (Harness h = Harness.builder().servers(1)
        .gateway(g -> g.clientTimeouts(Duration.ofSeconds(3), Duration.ofSeconds(2))).start();
        SocketChannel c = SocketChannel.open(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), h.gateway.uri().getPort()))) {
      c.write(ByteBuffer.wrap(HEAD.getBytes(StandardCharsets.US_ASCII)));
      c.write(ByteBuffer.wrap("{".getBytes(StandardCharsets.US_ASCII)));
      long t0 = System.nanoTime();
      c.socket().setSoTimeout(10_000);
      byte[] all = c.socket().getInputStream().readAllBytes();
      String response = new String(all, StandardCharsets.UTF_8);
      assertThat(response).startsWith("HTTP/1.1 408").contains("\"error\"").contains("body");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(5));
    }
  }
}
