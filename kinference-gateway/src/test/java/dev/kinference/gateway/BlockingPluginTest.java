package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** A plugin that blocks on a request's path or at its end, with {@link Gateway.Builder#blockingPlugins} set. */
class BlockingPluginTest {

  /** Tokenizes like the approximate tokenizer, but holds any request that asks to be held until released. */
  static final class HoldingTokenizer implements Tokenizer {
    final CountDownLatch holding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final ApproximateTokenizer tokens = new ApproximateTokenizer();

    @Override
    public String name() {
      return "holding-test";
    }

    @Override
    public int[] tokenize(InferenceRequest request) {
      if (String.valueOf(request.body()).contains("hold me")) {
        holding.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return tokens.tokenize(request);
    }
  }

  static HttpRequest chat(Harness h, String question) {
    return HttpRequest.newBuilder(URI.create(h.gateway.uri() + "/v1/chat/completions"))
        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + Harness.MODEL + "\",\"max_tokens\":4,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"" + question + "\"}]}")).build();
  }

  @Test
  void aTokenizerThatBlocksHoldsUpOnlyItsOwnRequest() throws Exception {
    HoldingTokenizer tokenizer = new HoldingTokenizer();
    try (Harness h = Harness.builder().router(r -> r.tokenizer(tokenizer)).gateway(g -> g.blockingPlugins(true))
        .start(); HttpClient first = HttpClient.newHttpClient()) {
      CompletableFuture<HttpResponse<String>> held = first.sendAsync(
          HttpRequest.newBuilder(chat(h, "hold me"), (name, value) -> !name.equalsIgnoreCase("timeout"))
              .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(tokenizer.holding.await(10, TimeUnit.SECONDS)).as("the held request reached the tokenizer").isTrue();

      // Each on a connection of its own, so that they land on every I/O thread, the held request's too.
      for (int i = 0; i < 8; i++) {
        try (HttpClient client = HttpClient.newHttpClient()) {
          HttpResponse<String> r = client.send(chat(h, "Question " + i), HttpResponse.BodyHandlers.ofString());
          assertThat(r.statusCode()).as("request %d while another is held", i).isEqualTo(200);
        }
      }
      assertThat(held).isNotDone();
      tokenizer.release.countDown();
      assertThat(held.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  /** Admits everything, but settling a request that asks to be held waits until released (a networked store). */
  static final class HoldingGuard implements RequestGuard {
    final CountDownLatch holding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch settled = new CountDownLatch(1);

    @Override
    public CallerIdentity authenticate(ApiFormat format, Function<String, @Nullable String> header) {
      return CallerIdentity.ANONYMOUS;
    }

    @Override
    public RequestReservation admit(CallerIdentity caller, InferenceRequest request) {
      boolean hold = String.valueOf(request.body()).contains("hold me");
      return new RequestReservation() {
        @Override
        public InferenceRequest request() {
          return request;
        }

        @Override
        public void settle(Usage usage, Endpoint servedBy, double cost, boolean failed) {
          if (hold) {
            holding.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            settled.countDown();
          }
        }

        @Override
        public void release() {}
      };
    }

    @Override
    public @Nullable List<String> models(CallerIdentity caller) {
      return null;
    }
  }

  @Test
  void aReservationThatBlocksWhenSettledHoldsUpOnlyItsOwnRequest() throws Exception {
    // Settling runs where the upstream's answer is handled, which is an I/O thread unless plugins may block.
    HoldingGuard guard = new HoldingGuard();
    try (Harness h = Harness.builder().gateway(g -> g.guard(guard).blockingPlugins(true)).start();
        HttpClient first = HttpClient.newHttpClient()) {
      // Its answer may reach the client before the settling ends; the settling is what holds a thread.
      var unused = first.sendAsync(chat(h, "hold me"), HttpResponse.BodyHandlers.discarding());
      assertThat(guard.holding.await(10, TimeUnit.SECONDS)).as("the held request is being settled").isTrue();

      for (int i = 0; i < 8; i++) {
        try (HttpClient client = HttpClient.newHttpClient()) {
          HttpResponse<String> r = client.send(chat(h, "Question " + i), HttpResponse.BodyHandlers.ofString());
          assertThat(r.statusCode()).as("request %d while another is being settled", i).isEqualTo(200);
        }
      }
      assertThat(guard.settled.getCount()).as("still settling").isEqualTo(1);
      guard.release.countDown();
      assertThat(guard.settled.await(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
