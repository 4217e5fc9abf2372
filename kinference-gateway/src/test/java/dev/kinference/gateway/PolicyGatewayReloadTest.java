package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.config.PolicyWatcher;
import dev.kinference.policy.engine.Governance;
import dev.kinference.sim.server.SimulatedServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21: a hot reload is all or nothing. Before, a provider the gateway could not build (models: [], a zero
 * timeout) was logged as "Policy reloaded" and then as an IllegalArgumentException stack trace, leaving the policy
 * engine on the new configuration and the gateway on the old providers. Now the checker refuses such a provider
 * at file:line:column, and anything the gateway cannot build for a new configuration refuses it whole.
 */
class PolicyGatewayReloadTest {

  static final String KEY = "demo-key-reload";

  static String config(SimulatedServer sim, String keyEnv, String models, String extraAlias) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: cloud}
        spec:
          api: openai
          baseUrl: https://api.example.com/v1
          apiKey: {env: %s}
          models: %s
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: local}
        spec:
          model: %s
          endpoints: [{id: sim-0, url: "%s"}]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: chat}
        spec:
          targets: [{pool: local}]
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: team}
        spec:
          apiKeys: [{sha256: %s}]
          models: ["*"]
        %s""".formatted(keyEnv, models, Harness.MODEL, sim.baseUri(), Governance.sha256Hex(KEY), extraAlias);
  }

  static final String CHAT2 = """
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: chat2}
      spec:
        targets: [{pool: local}]
      """;

  static @Nullable String environment(String name) {
    return switch (name) {
      case "KEY_OK" -> "sk-test";
      case "KEY_BROKEN" -> throw new IllegalStateException("the secret store is unreachable");
      default -> null;
    };
  }

  static int ask(HttpClient http, PolicyGateway pg, String model) throws Exception {
    String body = "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
        + "\"max_tokens\":4}";
    return http.send(HttpRequest.newBuilder(URI.create(pg.gateway().uri() + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  /** Replaces the file at once, so that the watcher's own thread never reads half of it. */
  static void write(Path file, String text) throws java.io.IOException {
    Path tmp = Files.createTempFile(file.getParent(), ".tmp", ".part");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void aReloadTheGatewayCannotBuildKeepsTheOldConfigurationWhole(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("config.yaml");
    try (SimulatedServer sim = SimulatedServer.builder(Harness.MODEL).name("sim-0").defaultOutputTokens(4)
        .timeScale(50).kvEvents(false).start()) {
      write(file, config(sim, "KEY_OK", "[{name: m1}]", ""));
      try (PolicyGateway pg = PolicyGateway.builder().watch(List.of(dir))
          .environment(PolicyGatewayReloadTest::environment).gateway(g -> g.port(0)).build().start();
          HttpClient http = HttpClient.newHttpClient()) {
        PolicyWatcher w = Objects.requireNonNull(pg.watcher());
        assertThat(ask(http, pg, "chat")).isEqualTo(200);

        // models: [] is refused by the checker, at its position, before anything is built
        write(file, config(sim, "KEY_OK", "[]", CHAT2));
        PolicyWatcher.Reload empty = w.reloadNow();
        assertThat(empty.applied()).isFalse();
        assertThat(empty.result().report()).contains(file + ":8:11: error: spec.models: no models");
        assertThat(pg.governance().config().alias("chat2")).isNull();

        // valid for the checker, but the gateway cannot build its providers: refused whole, nothing half-applied
        write(file, config(sim, "KEY_BROKEN", "[{name: m2}]", CHAT2));
        PolicyWatcher.Reload broken = w.reloadNow();
        assertThat(broken.applied()).isFalse();
        assertThat(broken.result().report()).contains("the gateway cannot use this configuration: "
            + "java.lang.IllegalStateException: the secret store is unreachable");
        assertThat(pg.governance().config().alias("chat2")).isNull();
        assertThat(Objects.requireNonNull(w.get().provider("cloud")).offers("m1")).isTrue();
        assertThat(pg.fleet().get("external:cloud/m1")).isNotNull();
        assertThat(pg.fleet().get("external:cloud/m2")).isNull();
        assertThat(ask(http, pg, "chat2")).isEqualTo(404);
        assertThat(ask(http, pg, "chat")).isEqualTo(200);

        // a good change is applied whole: policy, fleet and providers
        write(file, config(sim, "KEY_OK", "[{name: m2}]", CHAT2));
        assertThat(w.reloadNow().applied()).isTrue();
        assertThat(pg.governance().config().alias("chat2")).isNotNull();
        assertThat(pg.fleet().get("external:cloud/m2")).isNotNull();
        assertThat(pg.fleet().get("external:cloud/m1")).isNull();
        assertThat(ask(http, pg, "chat2")).isEqualTo(200);
      }
    }
  }
}
