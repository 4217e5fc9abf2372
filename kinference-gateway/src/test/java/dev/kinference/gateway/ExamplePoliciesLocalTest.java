package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.sim.server.SimulatedServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 21, "a newcomer can run the example": {@code examples/policies-local} served against simulated servers
 * (on free ports standing in for the README's), answering the README's requests sent with the demonstration keys.
 */
class ExamplePoliciesLocalTest {

  static final Path EXAMPLES = Path.of("..", "examples");

  static HttpResponse<String> send(HttpClient http, PolicyGateway pg, String header, String value, Path body)
      throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
        .header(header, value).header("content-type", "application/json").timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofFile(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The README's fixed ports, and free ones the test uses instead (a test never relies on a fixed port). */
  static final int[] README_PORTS = {18101, 18102, 18103, 18111, 18112};

  static int freePort() throws java.io.IOException {
    try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The overlay as written, in a temporary directory, with its ports replaced by {@code ports}. */
  static Path overlayOn(int[] ports) throws java.io.IOException {
    Path dir = java.nio.file.Files.createTempDirectory("policies-local-");
    try (var files = java.nio.file.Files.list(EXAMPLES.resolve("policies-local"))) {
      for (Path f : files.toList()) {
        String text = java.nio.file.Files.readString(f); // follows the links to ../policies
        for (int i = 0; i < README_PORTS.length; i++) {
          text = text.replace("127.0.0.1:" + README_PORTS[i], "127.0.0.1:" + ports[i]);
        }
        java.nio.file.Files.writeString(dir.resolve(f.getFileName().toString()), text);
      }
    }
    return dir;
  }

  @Test
  void theLocalExampleServesTheReadmesRequestsWithItsDemoKeys() throws Exception {
    List<SimulatedServer> sims = new ArrayList<>();
    int[] ports = new int[README_PORTS.length];
    for (int i = 0; i < ports.length; i++) {
      ports[i] = freePort();
    }
    Path overlay = overlayOn(ports);
    try {
      for (int i = 0; i < 3; i++) {
        sims.add(SimulatedServer.builder("Qwen/Qwen3-8B").name("small-" + i).port(ports[i]).kvEvents(false)
            .timeScale(50).defaultOutputTokens(8).start());
      }
      for (int i = 0; i < 2; i++) {
        sims.add(SimulatedServer.builder("Qwen/Qwen3-32B").name("large-" + i).port(ports[3 + i]).kvEvents(false)
            .timeScale(50).defaultOutputTokens(8).start());
      }
      List<String> small = List.of("127.0.0.1:" + ports[0], "127.0.0.1:" + ports[1], "127.0.0.1:" + ports[2]);
      List<String> large = List.of("127.0.0.1:" + ports[3], "127.0.0.1:" + ports[4]);
      try (PolicyGateway pg = PolicyGateway.builder().watch(List.of(overlay))
          .environment(name -> null).gateway(g -> g.port(0).debugHeaders(true)).build().start();
          HttpClient http = HttpClient.newHttpClient()) {
        Path policies = EXAMPLES.resolve("policies");
        // README: "A short question from search" goes to pool small (simple-prompts-to-small-model)
        HttpResponse<String> simple = send(http, pg, "Authorization", "Bearer demo-search-prod",
            policies.resolve("request.json"));
        assertThat(simple.statusCode()).as(simple.body()).isEqualTo(200);
        assertThat(simple.headers().firstValue("x-kinference-endpoint")).hasValueSatisfying(
            id -> assertThat(small).contains(id));
        // README: the prompt with personal data from support-bot, recognised by its header, is served by large
        HttpResponse<String> pii = send(http, pg, "x-kinference-tenant", "support-bot",
            policies.resolve("request-pii.json"));
        assertThat(pii.statusCode()).as(pii.body()).isEqualTo(200);
        assertThat(pii.headers().firstValue("x-kinference-endpoint")).hasValueSatisfying(
            id -> assertThat(large).contains(id));
        // the other demonstration keys identify their tenants; a wrong key is refused
        assertThat(send(http, pg, "Authorization", "Bearer demo-search-ci", policies.resolve("request.json"))
            .statusCode()).isEqualTo(200);
        assertThat(send(http, pg, "x-api-key", "demo-analytics-nightly", policies.resolve("request.json"))
            .statusCode()).isEqualTo(200);
        assertThat(send(http, pg, "Authorization", "Bearer demo-wrong", policies.resolve("request.json"))
            .statusCode()).isEqualTo(401);
      }
    } finally {
      sims.forEach(SimulatedServer::close);
    }
  }
}
