package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A rolling restart: 50 streaming clients through two gateways behind a "Service" (clients pick a replica whose
 * {@code /ready} holds); one gateway is drained as SIGTERM drains it ({@code kinference serve}'s shutdown hook calls
 * {@link Gateway#drain} then closes): no stream is cut, no request fails, and the drain ends within its timeout.
 */
class GracefulDrainTest {

  @Test
  void aGatewayDrainedMidRunCutsNoStreamAndFailsNoRequest() throws Exception {
    List<SimulatedServer> sims = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      sims.add(SimulatedServer.builder(Harness.MODEL).name("sim-" + i).timeScale(2).kvEvents(false).start());
    }
    String yaml = TestPolicies.pool(Harness.MODEL, TestPolicies.endpoints(sims));
    PolicyGateway a = PolicyGateway.builder().config(PolicyLoader.load(yaml, "a.yaml").orThrow())
        .gateway(g -> g.port(0).accessLog(false)).build().start();
    PolicyGateway b = PolicyGateway.builder().config(PolicyLoader.load(yaml, "b.yaml").orThrow())
        .gateway(g -> g.port(0).accessLog(false)).build().start();
    AtomicInteger completed = new AtomicInteger();
    AtomicInteger servedByDrained = new AtomicInteger();
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
    ExecutorService clients = Executors.newFixedThreadPool(50);
    try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
      List<Future<?>> running = new ArrayList<>();
      for (int c = 0; c < 50; c++) {
        int client = c;
        running.add(clients.submit(() -> {
          int n = 0;
          while (System.nanoTime() < end) {
            // the Service: a replica whose /ready fails gets no new clients
            PolicyGateway g = (client + n++) % 2 == 0 && !a.gateway().draining() ? a : b;
            String body = "{\"model\":\"" + Harness.MODEL + "\",\"stream\":true,\"max_tokens\":60,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"client " + client + " turn " + n + "\"}]}";
            try {
              HttpResponse<java.io.InputStream> r = http.send(HttpRequest.newBuilder(
                      URI.create(g.gateway().uri() + "/v1/chat/completions"))
                  .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(), HttpResponse.BodyHandlers.ofInputStream());
              boolean done = false;
              try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(),
                  StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                  done |= line.equals("data: [DONE]");
                  if (line.contains("\"error\"")) {
                    failures.add("client " + client + ": " + line);
                  }
                }
              }
              if (r.statusCode() != 200 || !done) {
                failures.add("client " + client + ": status " + r.statusCode() + (done ? "" : ", stream cut"));
              } else {
                completed.incrementAndGet();
                if (g == a && a.gateway().draining()) {
                  servedByDrained.incrementAndGet();
                }
              }
            } catch (Exception e) {
              failures.add("client " + client + ": " + e);
            }
          }
          return null;
        }));
      }
      Thread.sleep(1_500);
      long t0 = System.nanoTime();
      boolean drained = a.gateway().drain(Duration.ofSeconds(30)); // what SIGTERM does, then close()
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      a.close();
      for (Future<?> f : running) {
        f.get();
      }
      assertThat(failures).as("failed or cut requests").isEmpty();
      assertThat(drained).as("drained within the timeout (took %s)", took).isTrue();
      assertThat(took).isLessThan(Duration.ofSeconds(30));
      assertThat(servedByDrained.get()).as("streams that were running on the drained gateway finished").isPositive();
      assertThat(completed.get()).isGreaterThan(50);
    } finally {
      clients.shutdownNow();
      b.close();
      sims.forEach(SimulatedServer::close);
    }
  }
}
