package dev.kinference.cli;

import dev.kinference.endpoint.EndpointLabels;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.k8s.PolicyResourceSource;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.config.InvalidConfigException;
import dev.kinference.policy.config.Durations;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.sim.server.SimulatedServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kinference serve}: the OpenAI/Anthropic-compatible gateway over the fleet a policy configuration
 * describes, or, without one, over three simulated vLLM servers started in-process.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
        "Serves an OpenAI- and Anthropic-compatible API (/v1/chat/completions, /v1/completions, /v1/responses, "
            + "/v1/messages, "
            + "/v1/messages/count_tokens, /v1/models) plus /health, /ready and /metrics, routing each request "
            + "cache-aware across the fleet.",
        "",
        "With --config, the fleet, tenants, aliases, rules and cloud providers come from the YAML files in DIR "
            + "(see 'kinference check'); the files are watched and a valid change is applied without a restart. "
            + "Without --config, three simulated vLLM servers (model Qwen/Qwen3-8B) are started in this process, "
            + "so the gateway can be tried on any machine.",
        "",
        "On Kubernetes (as the Helm chart runs it): --discovery kubernetes serves the vLLM pods found through the API "
            + "server, and --policy-namespace NS reads the configuration from Kinference custom resources.",
        ""})
public final class ServeCommand implements Callable<Integer> {

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before call()
  CommandLine.Model.CommandSpec spec;

  @Option(names = {"-c", "--config"}, paramLabel = "DIR",
      description = "Policy configuration: a directory of YAML files, or files. Repeatable.")
  List<Path> config = new ArrayList<>();

  @Option(names = {"-p", "--port"}, defaultValue = "8080", paramLabel = "PORT",
      description = "Port to listen on; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port = 8080;

  @Option(names = "--host", defaultValue = "127.0.0.1", paramLabel = "ADDRESS",
      description = "Address to bind; 0.0.0.0 to serve other hosts (default: ${DEFAULT-VALUE}).")
  String host = "127.0.0.1";

  @Option(names = "--connect-timeout", defaultValue = "2s", paramLabel = "DURATION",
      description = "Connecting to a local server (default: ${DEFAULT-VALUE}).")
  String connectTimeout = "2s";

  @Option(names = "--first-token-timeout", defaultValue = "60s", paramLabel = "DURATION",
      description = "Wait for a local server's first token before trying the next endpoint (default: "
          + "${DEFAULT-VALUE}).")
  String firstTokenTimeout = "60s";

  @Option(names = "--idle-timeout", defaultValue = "60s", paramLabel = "DURATION",
      description = "Longest silence within a stream (default: ${DEFAULT-VALUE}).")
  String idleTimeout = "60s";

  @Option(names = "--queue", defaultValue = "1024", paramLabel = "N",
      description = "Requests that may wait when every endpoint is saturated; 0: none (default: ${DEFAULT-VALUE}).")
  int queue = 1024;

  @Option(names = "--queue-wait", defaultValue = "30s", paramLabel = "DURATION",
      description = "Longest wait in that queue before 503 (default: ${DEFAULT-VALUE}).")
  String queueWait = "30s";

  @Option(names = "--max-streams", defaultValue = "1024", paramLabel = "N",
      description = "Concurrent streams per HTTP/2 (h2c) connection; 0 serves HTTP/1.1 only (default: "
          + "${DEFAULT-VALUE}).")
  int maxStreams = 1024;

  @Option(names = "--no-access-log", description = "Do not write one log line per request.")
  boolean noAccessLog;

  @Option(names = "--header-timeout", defaultValue = "10s", paramLabel = "DURATION",
      description = "HTTP/1.1 request headers must arrive within this of their first byte, else 408 (default: "
          + "${DEFAULT-VALUE}).")
  String headerTimeout = "10s";

  @Option(names = "--body-timeout", defaultValue = "30s", paramLabel = "DURATION",
      description = "A request's body must arrive within this of its headers, else 408 (default: ${DEFAULT-VALUE}).")
  String bodyTimeout = "30s";

  @Option(names = "--probe-port", defaultValue = "-1", paramLabel = "PORT",
      description = "Also serve /health, /ready and /metrics on this port, on a connector of its own, so that probes "
          + "never wait behind a burst of requests (the Helm chart's probes use it); -1: none (default: "
          + "${DEFAULT-VALUE}).")
  int probePort = -1;

  @Option(names = "--drain-timeout", defaultValue = "300s", paramLabel = "DURATION",
      description = "On SIGTERM: /ready fails at once and requests in flight, streams included, may run this long "
          + "before the gateway stops; longer than a typical long stream (default: ${DEFAULT-VALUE}).")
  String drainTimeout = "300s";

  @Option(names = "--debug-headers", description = "Add x-kinference-endpoint and x-kinference-cached-tokens to "
      + "responses (they name internal servers: for debugging only).")
  boolean debugHeaders;

  @Option(names = "--sim-servers", defaultValue = "3", paramLabel = "N",
      description = "Without --config: how many simulated servers (default: ${DEFAULT-VALUE}).")
  int simServers = 3;

  @Option(names = "--discovery", paramLabel = "NAME",
      description = "Also serve the vLLM servers an endpoint-source plugin finds, by name: 'kubernetes' watches the "
          + "EndpointSlices of KINFERENCE_K8S_SERVICE or the pods of KINFERENCE_K8S_POD_SELECTOR in "
          + "KINFERENCE_K8S_NAMESPACE (in-cluster service account, else ~/.kube/config).")
  @Nullable String discovery;

  @Option(names = "--policy-namespace", paramLabel = "NAMESPACE",
      defaultValue = "${env:KINFERENCE_POLICY_NAMESPACE}",
      description = "Read tenants, pools, aliases, providers and policies from Kinference custom resources in this "
          + "Kubernetes namespace (watched; an invalid change is refused) instead of --config files (default: "
          + "KINFERENCE_POLICY_NAMESPACE, which the Helm chart sets).")
  @Nullable String policyNamespace;

  @Option(names = "--index", defaultValue = "auto", paramLabel = "KIND",
      description = "What the router knows of each server's cache: precise (the servers' KV events), approximate "
          + "(its own decisions) or auto: precise when a configured endpoint publishes KV events (default: "
          + "${DEFAULT-VALUE}). With --discovery, say precise when the pods carry the kinference.dev/kv-events "
          + "annotation.")
  String index = "auto";

  @CommandLine.Mixin
  StateStoreOptions stateStoreOptions = new StateStoreOptions();

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<SimulatedServer> sims = new ArrayList<>();
    PolicyGateway.Builder b = PolicyGateway.builder().routerReplicas(stateStoreOptions.replicas())
        .peerPrefillSharing(stateStoreOptions.prefillSharing());
    switch (index) {
      case "precise" -> b.preciseIndex(true);
      case "approximate" -> b.preciseIndex(false);
      case "auto" -> { }
      default -> {
        err.println("kinference serve: --index must be precise, approximate or auto, not " + index);
        return 2;
      }
    }
    if (policyNamespace != null && !config.isEmpty()) {
      err.println("kinference serve: give either --config or --policy-namespace, not both");
      return 2;
    }
    if (discovery != null) {
      PluginSet<EndpointSource> sources = Plugins.load(EndpointSource.class);
      Optional<EndpointSource> source = sources.find(discovery);
      if (source.isEmpty()) {
        err.println("kinference serve: no endpoint source named '" + discovery + "'; available: "
            + sources.names());
        return 2;
      }
      b.discovery(source.get());
    }
    if (policyNamespace != null) {
      String namespace = policyNamespace;
      b.configFeed(deliver -> {
        PolicyResourceSource resources = PolicyResourceSource.builder().namespace(namespace).build();
        resources.start(deliver);
        return resources;
      });
    } else if (config.isEmpty() && discovery != null) {
      b.config(dev.kinference.policy.config.PolicyConfig.EMPTY);
    } else if (config.isEmpty()) {
      for (int i = 0; i < simServers; i++) {
        sims.add(SimulatedServer.builder("Qwen/Qwen3-8B").name("sim-" + i).start());
      }
      b.config(PolicyLoader.load(embeddedConfig(sims), "(embedded: " + simServers + " simulated servers)")
          .orThrow());
    } else {
      for (Path p : config) {
        if (!Files.exists(p)) {
          err.println("kinference serve: no such file or directory: " + p);
          return 2;
        }
      }
      b.watch(config);
    }
    RateLimitStore store;
    try {
      store = stateStoreOptions.open();
    } catch (IllegalArgumentException e) {
      err.println("kinference serve: " + e.getMessage());
      sims.forEach(SimulatedServer::close);
      return 2;
    }
    b.stateStore(store);
    Duration ftt = duration(firstTokenTimeout, "--first-token-timeout");
    Duration connect = duration(connectTimeout, "--connect-timeout");
    Duration idle = duration(idleTimeout, "--idle-timeout");
    Duration wait = duration(queueWait, "--queue-wait");
    Duration headers = duration(headerTimeout, "--header-timeout");
    Duration bodies = duration(bodyTimeout, "--body-timeout");
    b.gateway(g -> {
      g.host(host).port(port).connectTimeout(connect).firstTokenTimeout(ftt).idleTimeout(idle).queueCapacity(queue)
          .queueMaxWait(wait).accessLog(!noAccessLog).maxConcurrentStreams(maxStreams).debugHeaders(debugHeaders)
          .clientTimeouts(headers, bodies).adminKey(System.getenv("KINFERENCE_ADMIN_KEY"));
      if (probePort >= 0) {
        g.probePort(probePort);
      }
    });
    PolicyGateway gateway;
    try {
      gateway = b.build();
    } catch (InvalidConfigException e) {
      err.println("kinference serve: the configuration has errors:");
      err.println(e.getMessage());
      sims.forEach(SimulatedServer::close);
      return 1;
    } catch (IOException | RuntimeException e) {
      // a discovery that cannot start (no cluster, no kubeconfig) lands here too
      err.println("kinference serve: " + e.getMessage());
      sims.forEach(SimulatedServer::close);
      return 2;
    }
    try {
      gateway.start();
    } catch (IllegalStateException e) {
      err.println("kinference serve: " + e.getMessage());
      gateway.close();
      sims.forEach(SimulatedServer::close);
      return 2;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Duration drain = duration(drainTimeout, "--drain-timeout");
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        gateway.gateway().drain(drain);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      gateway.close();
      sims.forEach(SimulatedServer::close);
      stopped.countDown();
    }, "kinference-serve-shutdown"));
    String base = gateway.gateway().uri().toString();
    out.println("kinference gateway on " + base + " (" + gateway.fleet().endpoints().size() + " endpoints"
        + (sims.isEmpty() ? "" : ", simulated") + ")");
    out.println("  OpenAI:    OPENAI_BASE_URL=" + base + "/v1");
    out.println("  Anthropic: ANTHROPIC_BASE_URL=" + base);
    out.println("  try:       curl -s " + base + "/v1/chat/completions -H 'Content-Type: application/json' -d "
        + "'{\"model\":\"" + tryItModel(gateway)
        + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'");
    out.println("  state:     " + stateStoreOptions.describe(store));
    if (stateStoreOptions.replicas() > 1) {
      out.println("  replicas:  one of " + stateStoreOptions.replicas() + (gateway.sharesInFlightPrefill()
          ? "; sharing the prompt tokens in the servers' prefill through the state store"
          : "; the prompt tokens in the servers' prefill are this replica's own account"));
    }
    out.println("  routing:   " + gateway.router().profile().describe());
    gateway.router().profilesByModel().forEach((model, profile) ->
        out.println("  routing:   " + model + ": " + profile.describe() + " (its pool's)"));
    int probes = gateway.gateway().probePort();
    if (probes >= 0) {
      out.println("  probes:    /health, /ready and /metrics also on port " + probes);
    }
    out.println("  metrics:   " + base + "/metrics      Ctrl-C stops.");
    out.flush();
    stopped.await();
    return 0;
  }

  /** A pool over the simulated servers, with their KV-event addresses, open to everyone. */
  static String embeddedConfig(List<SimulatedServer> sims) {
    return embeddedConfig(sims, "Qwen/Qwen3-8B");
  }

  /**
   * A pool of {@code model} over the simulated servers, with their KV-event addresses (so a gateway given it uses the
   * precise index), open to everyone; also what {@code kinference sim-servers --pool-file} writes.
   */
  static String embeddedConfig(List<SimulatedServer> sims, String model) {
    StringBuilder sb = new StringBuilder();
    sb.append("apiVersion: kinference.dev/v1alpha1\nkind: InferencePool\nmetadata:\n  name: simulated\n")
        .append("spec:\n  model: \"")
        .append(model.replace("\\", "\\\\").replace("\"", "\\\"")).append("\"\n  endpoints:\n");
    for (SimulatedServer s : sims) {
      sb.append("    - id: ").append(s.name()).append("\n      url: ").append(s.baseUri()).append('\n');
      String events = s.kvEventsEndpoint();
      String replay = s.kvEventsReplayEndpoint();
      if (events != null) {
        sb.append("      labels:\n")
            .append("        ").append(EndpointLabels.KV_EVENTS).append(": \"").append(events)
            .append("\"\n");
        if (replay != null) {
          sb.append("        ").append(EndpointLabels.KV_EVENTS_REPLAY).append(": \"").append(replay)
              .append("\"\n");
        }
        sb.append("        ").append(EndpointLabels.KV_EVENTS_TOPIC).append(": \"")
            .append(s.kvEventsTopic()).append("\"\n");
      }
    }
    sb.append("  blockSize: ").append(sims.isEmpty() ? 16 : sims.get(0).blockSize()).append('\n');
    return sb.toString();
  }

  /** A command-line duration, in the grammar of policy files ({@link Durations}). */
  static Duration duration(String text, String option) {
    Duration d = Durations.parse(text);
    if (d == null) {
      throw new CommandLine.ParameterException(new CommandLine(new ServeCommand()),
          option + ": not a duration: " + text + " (use " + Durations.EXAMPLES + ")");
    }
    return d;
  }

  /** A model the gateway serves, for the try-it line: the first endpoint's, or a placeholder before any is found. */
  private static String tryItModel(PolicyGateway gateway) {
    return gateway.fleet().endpoints().stream().map(e -> e.endpoint().model()).findFirst().orElse("MODEL");
  }
}
