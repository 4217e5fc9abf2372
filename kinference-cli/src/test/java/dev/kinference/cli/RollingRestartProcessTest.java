package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A rolling restart with real processes: two {@code kinference serve} processes (each over its own simulated
 * server), 50 streaming clients through both behind a "Service" that stops sending to a replica whose {@code /ready}
 * fails; one process is sent SIGTERM mid-run. No stream is cut, no request fails, and the process exits within its
 * drain timeout.
 */
class RollingRestartProcessTest {

  record Served(Process process, URI uri) {}

  static Served serve() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        "dev.kinference.cli.KinferenceCommand", "serve", "--port", "0", "--sim-servers", "1",
        "--drain-timeout", "30s", "--no-access-log")
        .redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<URI> uri = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.startsWith("kinference gateway on ")) {
            uri.complete(URI.create(line.substring("kinference gateway on ".length()).split(" ")[0]));
          }
        }
      } catch (java.io.IOException e) {
        // the process ended
      }
      uri.completeExceptionally(new IllegalStateException("serve exited before listening"));
    });
    reader.setDaemon(true);
    reader.start();
    return new Served(p, uri.get(60, TimeUnit.SECONDS));
  }

  static boolean ready(HttpClient http, URI base) {
    try {
      return http.send(HttpRequest.newBuilder(base.resolve("/ready")).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (Exception e) {
      return false;
    }
  }

  @Test
  void sigtermDrainsAServeProcessWithoutCuttingAStream() throws Exception {
    Served a = serve();
    Served b = serve();
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    AtomicInteger completed = new AtomicInteger();
    ExecutorService clients = Executors.newFixedThreadPool(50);
    try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
      java.util.concurrent.atomic.AtomicBoolean aReady = new java.util.concurrent.atomic.AtomicBoolean(true);
      Thread endpoints = new Thread(() -> { // the Service's endpoints follow /ready
        while (aReady.get()) {
          aReady.set(ready(http, a.uri()));
          try {
            Thread.sleep(50);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      endpoints.setDaemon(true);
      endpoints.start();
      long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      List<Future<?>> running = new ArrayList<>();
      for (int c = 0; c < 50; c++) {
        int client = c;
        running.add(clients.submit(() -> {
          int n = 0;
          while (System.nanoTime() < end) {
            URI base = (client + n++) % 2 == 0 && aReady.get() ? a.uri() : b.uri();
            try {
              HttpResponse<java.util.stream.Stream<String>> r = http.send(HttpRequest.newBuilder(
                      base.resolve("/v1/chat/completions")).header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"Qwen/Qwen3-8B\",\"stream\":true,"
                      + "\"max_tokens\":40,\"messages\":[{\"role\":\"user\",\"content\":\"c" + client + " " + n
                      + "\"}]}")).build(), HttpResponse.BodyHandlers.ofLines());
              boolean done;
              try (var lines = r.body()) {
                done = lines.anyMatch("data: [DONE]"::equals);
              }
              if (r.statusCode() != 200 || !done) {
                failures.add("client " + client + " on " + base + ": status " + r.statusCode()
                    + (done ? "" : ", stream cut"));
              } else {
                completed.incrementAndGet();
              }
            } catch (Exception e) {
              failures.add("client " + client + " on " + base + ": " + e);
            }
          }
          return null;
        }));
      }
      Thread.sleep(2_000);
      long t0 = System.nanoTime();
      a.process().destroy(); // SIGTERM
      boolean exited = a.process().waitFor(40, TimeUnit.SECONDS);
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      for (Future<?> f : running) {
        f.get();
      }
      assertThat(exited).as("the process exited after SIGTERM").isTrue();
      assertThat(took).as("within the drain timeout (30 s)").isLessThan(Duration.ofSeconds(30));
      assertThat(failures).as("failed or cut requests").isEmpty();
      assertThat(completed.get()).isGreaterThan(50);
    } finally {
      clients.shutdownNow();
      a.process().destroyForcibly();
      b.process().destroyForcibly();
      b.process().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
