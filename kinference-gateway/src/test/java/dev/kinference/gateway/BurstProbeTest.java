package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression: {@code /health} took 1.6 to more than 10 s during a burst of 2,000 streams on a fresh gateway (both I/O
 * threads busy), so a liveness probe would restart pods under load. Probes on the probe port have a connector of
 * their own. The 100 ms target is the issue's; this test asserts a looser bound (timed unit tests do not hold speed
 * targets on a shared 2-core machine) and prints the figures.
 */
class BurstProbeTest {

  @Test
  void healthStaysFastOnTheProbePortDuringABurstOf2000Streams() throws Exception {
    try (Harness h = Harness.builder().servers(3)
        .gateway(g -> g.probePort(0).queueCapacity(4096).accessLog(false)).start();
        HttpClient clients = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(30)).build();
        HttpClient probe = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      URI health = URI.create("http://127.0.0.1:" + h.gateway.probePort() + "/health");
      assertThat(probe.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString())
          .statusCode()).isEqualTo(200);
      HttpResponse<String> notHere = probe.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + h.gateway.probePort() + "/v1/models")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(notHere.statusCode()).as("the probe port serves probes only").isEqualTo(404);

      List<Long> millis = Collections.synchronizedList(new ArrayList<>());
      AtomicBoolean bursting = new AtomicBoolean(true);
      Thread prober = new Thread(() -> {
        while (bursting.get()) {
          long t0 = System.nanoTime();
          try {
            probe.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
            millis.add((System.nanoTime() - t0) / 1_000_000);
            Thread.sleep(10);
          } catch (Exception e) {
            millis.add(20_000L);
          }
        }
      });
      prober.start();
      URI chat = URI.create(h.gateway.uri() + "/v1/chat/completions");
      List<CompletableFuture<HttpResponse<Void>>> streams = new ArrayList<>();
      for (int i = 0; i < 2000; i++) {
        streams.add(clients.sendAsync(HttpRequest.newBuilder(chat).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + Harness.MODEL + "\",\"stream\":true,"
                + "\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"burst " + i + "\"}]}"))
            .build(), HttpResponse.BodyHandlers.discarding()));
      }
      int ok = 0;
      for (CompletableFuture<HttpResponse<Void>> f : streams) {
        try {
          ok += f.get().statusCode() == 200 ? 1 : 0;
        } catch (Exception e) {
          // a refused stream does not matter here: the probes do
        }
      }
      bursting.set(false);
      prober.join();
      List<Long> sorted = new ArrayList<>(millis);
      Collections.sort(sorted);
      long p50 = sorted.get(sorted.size() / 2);
      long p99 = sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1));
      System.out.printf("burst of 2000 streams (%d answered 200): /health on the probe port p50 %d ms, p99 %d ms, "
          + "max %d ms over %d probes%n", ok, p50, p99, sorted.get(sorted.size() - 1), sorted.size());
      assertThat(sorted).hasSizeGreaterThan(5);
      assertThat(p99).as("probe p99 during the burst (target 100 ms)").isLessThan(1_000);
    }
  }
}
