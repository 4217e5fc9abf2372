package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointLabels;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.sim.server.SimulatedServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ServeCommandTest {

  @Test
  void helpDescribesTheCommand() {
    CliRun help = CliRun.of("serve", "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("--config").contains("--port").contains("/v1/messages")
        .contains("--discovery").contains("--policy-namespace");
  }

  @Test
  void redisReconnectAttemptsAreNotAWarningEach() {
    String before = System.getProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL);
    try {
      System.clearProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL);
      KinferenceCommand.quietReconnectWarnings();
      assertThat(System.getProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL)).isEqualTo("error");
      // a -D on the command line wins
      System.setProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL, "debug");
      KinferenceCommand.quietReconnectWarnings();
      assertThat(System.getProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL)).isEqualTo("debug");
    } finally {
      if (before == null) {
        System.clearProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL);
      } else {
        System.setProperty(KinferenceCommand.LETTUCE_WATCHDOG_LOG_LEVEL, before);
      }
    }
  }

  @Test
  void theLogLevelComesFromKinferenceLogLevel() {
    String before = System.getProperty(KinferenceCommand.DEFAULT_LOG_LEVEL);
    try {
      System.clearProperty(KinferenceCommand.DEFAULT_LOG_LEVEL);
      assertThat(KinferenceCommand.applyLogLevel(null)).isNull();
      assertThat(System.getProperty(KinferenceCommand.DEFAULT_LOG_LEVEL)).isNull();
      assertThat(KinferenceCommand.applyLogLevel("loud")).contains("KINFERENCE_LOG_LEVEL=loud ignored");
      assertThat(System.getProperty(KinferenceCommand.DEFAULT_LOG_LEVEL)).isNull();
      assertThat(KinferenceCommand.applyLogLevel(" WARNING ")).isNull();
      assertThat(System.getProperty(KinferenceCommand.DEFAULT_LOG_LEVEL)).isEqualTo("warn");
      // a -D on the command line wins
      assertThat(KinferenceCommand.applyLogLevel("debug")).isNull();
      assertThat(System.getProperty(KinferenceCommand.DEFAULT_LOG_LEVEL)).isEqualTo("warn");
    } finally {
      if (before == null) {
        System.clearProperty(KinferenceCommand.DEFAULT_LOG_LEVEL);
      } else {
        System.setProperty(KinferenceCommand.DEFAULT_LOG_LEVEL, before);
      }
    }
  }

  @Test
  void thePolicyNamespaceDefaultsToKinferencePolicyNamespace() {
    CommandLine.Model.OptionSpec option = new CommandLine(new ServeCommand()).getCommandSpec()
        .findOption("--policy-namespace");
    // picocli resolves ${env:KINFERENCE_POLICY_NAMESPACE}: null (no default) where it is not set
    assertThat(option.defaultValue()).isEqualTo(System.getenv("KINFERENCE_POLICY_NAMESPACE"));
    assertThat(option.description()[0]).contains("KINFERENCE_POLICY_NAMESPACE");
  }

  @Test
  void aMissingConfigurationDirectoryIsAClearErrorNotAStart() {
    CliRun r = CliRun.of("serve", "--config", "/no/such/dir", "--port", "0");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("no such file or directory: /no/such/dir");
  }

  /** Issue 21: a provider without models used to exit 2 with an IllegalArgumentException and no location. */
  @Test
  void aProviderWithoutModelsIsRefusedAtItsPosition(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws java.io.IOException {
    java.nio.file.Path file = dir.resolve("providers.yaml");
    java.nio.file.Files.writeString(file, """
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: openai}
        spec:
          api: openai
          baseUrl: https://api.openai.com/v1
          apiKey: {env: OPENAI_API_KEY}
          models: []
          timeouts: {request: 0s}
        """);
    CliRun r = CliRun.of("serve", "--config", dir.toString(), "--port", "0");
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).contains(file + ":8:11: error: spec.models: no models")
        .contains(file + ":9:23: error: spec.timeouts.request: a timeout of 0 would fail every request");
  }

  @Test
  void anUnknownDiscoveryPluginIsNamedWithTheAvailableOnes() {
    CliRun r = CliRun.of("serve", "--discovery", "consul", "--port", "0");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("no endpoint source named 'consul'").contains("kubernetes");
  }

  @Test
  void anUnknownIndexKindIsAClearError() {
    CliRun r = CliRun.of("serve", "--index", "exact", "--port", "0");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("--index must be precise, approximate or auto, not exact");
  }

  @Test
  void policiesComeFromFilesOrFromCustomResourcesNotBoth() {
    CliRun r = CliRun.of("serve", "--config", "examples/policies", "--policy-namespace", "llm");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("either --config or --policy-namespace");
  }

  @Test
  void theEmbeddedConfigurationIsAValidPoolOverTheSimulatedServers() {
    try (SimulatedServer s = SimulatedServer.builder("Qwen/Qwen3-8B").name("sim-0").start()) {
      LoadResult r = PolicyLoader.load(ServeCommand.embeddedConfig(List.of(s)), "embedded");
      assertThat(r.problems()).isEmpty();
      assertThat(r.orThrow().endpoints()).singleElement().satisfies(e -> {
        assertThat(e.id()).isEqualTo("sim-0");
        assertThat(e.label(EndpointLabels.KV_EVENTS)).isEqualTo(s.kvEventsEndpoint());
      });
      // sim-servers --pool-file: the served model's name as given
      LoadResult named = PolicyLoader.load(ServeCommand.embeddedConfig(List.of(s), "org/model: v2"), "pool.yaml");
      assertThat(named.problems()).isEmpty();
      assertThat(named.orThrow().endpoints()).singleElement()
          .satisfies(e -> assertThat(e.model()).isEqualTo("org/model: v2"));
      // a name that would end YAML's quoted string early stays whole
      LoadResult quoted = PolicyLoader.load(ServeCommand.embeddedConfig(List.of(s), "a\"b\\c"), "pool.yaml");
      assertThat(quoted.problems()).isEmpty();
      assertThat(quoted.orThrow().endpoints()).singleElement()
          .satisfies(e -> assertThat(e.model()).isEqualTo("a\"b\\c"));
    }
  }

  @Test
  void durationsReadAsPeopleWriteThem() {
    assertThat(ServeCommand.duration("250ms", "x")).isEqualTo(Duration.ofMillis(250));
    assertThat(ServeCommand.duration("1.5s", "x")).isEqualTo(Duration.ofMillis(1500));
    assertThat(ServeCommand.duration("2m", "x")).isEqualTo(Duration.ofMinutes(2));
    assertThat(ServeCommand.duration("PT3S", "x")).isEqualTo(Duration.ofSeconds(3));
  }
}
