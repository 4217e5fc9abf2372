package dev.kinference.gateway;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import dev.kinference.cloud.ExternalProviders;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.Fleet;
import dev.kinference.routing.Router;
import dev.kinference.sim.server.SimulatedFleet;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.sim.server.SimulatedServerBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A gateway in front of real simulated vLLM servers on loopback (and, optionally, external providers), with the
 * official SDKs as clients.
 */
final class Harness implements AutoCloseable {

  static final String MODEL = "Qwen/Qwen3-8B";

  final SimulatedFleet sims;
  final Fleet fleet;
  final Router router;
  final Gateway gateway;
  final HttpClient http = HttpClient.newHttpClient();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  private Harness(SimulatedFleet sims, Fleet fleet, Router router, Gateway gateway) {
    this.sims = sims;
    this.fleet = fleet;
    this.router = router;
    this.gateway = gateway;
  }

  static Builder builder() {
    return new Builder();
  }

  static final class Builder {
    int servers = 3;
    Consumer<SimulatedServerBuilder> eachServer = s -> s.defaultOutputTokens(8).timeScale(20).kvEvents(false);
    ExternalProviders providers = ExternalProviders.none();
    Consumer<Router.Builder> router = r -> { };
    Consumer<Gateway.Builder> gateway = g -> { };

    Builder servers(int n) {
      this.servers = n;
      return this;
    }

    Builder eachServer(Consumer<SimulatedServerBuilder> each) {
      this.eachServer = this.eachServer.andThen(each);
      return this;
    }

    Builder providers(ExternalProviders p) {
      this.providers = p;
      return this;
    }

    Builder router(Consumer<Router.Builder> r) {
      this.router = r;
      return this;
    }

    Builder gateway(Consumer<Gateway.Builder> g) {
      this.gateway = g;
      return this;
    }

    Harness start() {
      SimulatedFleet sims = SimulatedFleet.builder(MODEL).servers(servers).eachServer(eachServer).build();
      List<Endpoint> endpoints = new ArrayList<>(sims.endpoints());
      endpoints.addAll(providers.endpoints());
      Fleet fleet = Fleet.of(endpoints);
      Router.Builder rb = Router.builder().fleet(fleet);
      router.accept(rb);
      Router r = rb.build();
      Gateway.Builder gb = Gateway.builder().router(r).providers(providers).port(0).host("127.0.0.1")
          .debugHeaders(true);
      gateway.accept(gb);
      Gateway g = gb.build().start();
      return new Harness(sims, fleet, r, g);
    }
  }

  OpenAIClient openai() {
    OpenAIClient c = OpenAIOkHttpClient.builder().baseUrl(gateway.uri() + "/v1").apiKey("unused").maxRetries(0)
        .timeout(Duration.ofSeconds(30)).build();
    closeables.add(c::close);
    return c;
  }

  AnthropicClient anthropic() {
    AnthropicClient c = AnthropicOkHttpClient.builder().baseUrl(gateway.uri().toString()).apiKey("unused")
        .maxRetries(0).timeout(Duration.ofSeconds(30)).build();
    closeables.add(c::close);
    return c;
  }

  HttpResponse<String> post(String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gateway.uri() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gateway.uri() + path)).GET();
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Waits until no request is active: a request is recorded in /metrics when the write of its last byte completes,
   * which a client reading that byte may see first.
   */
  static void awaitEveryRequestRecorded(Gateway gateway) throws InterruptedException {
    StreamFailureTest.awaitTrue(() -> gateway.activeRequests() == 0, "every answered request is recorded");
  }

  /** The value of one sample of /metrics once every answered request is recorded, or 0 when absent. */
  double metric(String nameAndLabels) throws InterruptedException {
    awaitEveryRequestRecorded(gateway);
    for (String line : gateway.scrapeMetrics().split("\n")) {
      if (line.startsWith(nameAndLabels + " ")) {
        return Double.parseDouble(line.substring(nameAndLabels.length() + 1));
      }
    }
    return 0;
  }

  @Override
  public void close() {
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort
      }
    }
    gateway.close();
    router.close();
    sims.close();
    http.shutdownNow();
  }
}
