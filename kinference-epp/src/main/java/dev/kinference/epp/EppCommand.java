package dev.kinference.epp;

import dev.kinference.gateway.GovernanceGuard;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.k8s.InferenceObjectives;
import dev.kinference.k8s.InferencePoolSource;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.config.PolicyConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kinference epp}: Kinference as the endpoint picker of the Gateway API Inference Extension. The policy
 * configuration is assembled as {@code kinference serve} assembles it ({@link PolicyGateway}: fleet, metrics, KV
 * events, policy engine, governance), but instead of serving HTTP the router answers Envoy's ext_proc stream.
 *
 * <p>It lives here, with its own {@code main}, because this module depends on the gateway module, where the
 * {@code kinference} command line is: the gateway cannot name it without a cycle.
 */
@Command(
    name = "epp",
    mixinStandardHelpOptions = true,
    description = "Serve the Endpoint Picker Protocol (Envoy ext_proc v3 over gRPC) with Kinference's router.")
public final class EppCommand implements Callable<Integer> {

  @Option(names = {"-c", "--config"}, paramLabel = "DIR",
      description = "Policy configuration: a directory of YAML files, or files (watched). Repeatable. Without it, "
          + "--discovery is required and every discovered model is served.")
  List<Path> config = new ArrayList<>();

  @Option(names = "--discovery", paramLabel = "NAME",
      description = "Also pick among the vLLM servers an endpoint-source plugin finds, by name: 'kubernetes' watches "
          + "the EndpointSlices of KINFERENCE_K8S_SERVICE or the pods of KINFERENCE_K8S_POD_SELECTOR in "
          + "KINFERENCE_K8S_NAMESPACE, as for kinference serve.")
  @Nullable String discovery;

  @Option(names = {"--inference-pool", "--pool"}, paramLabel = "NAMESPACE/NAME",
      description = "Pick among the Ready pods of this Gateway API Inference Extension InferencePool "
          + "(inference.networking.k8s.io/v1): its spec.selector.matchLabels and spec.targetPorts, watched live. "
          + "Instead of --discovery; the API server is found as kubectl finds it (in a cluster, the service account).")
  @Nullable String inferencePool;

  @Option(names = "--pool-model", paramLabel = "MODEL",
      description = "With --inference-pool: the model of pods that do not name one in their kinference.dev/model "
          + "annotation or label (without it such pods are left out).")
  @Nullable String poolModel;

  @Option(names = "--objectives",
      description = "With --inference-pool: read the pool's InferenceObjectives (inference.networking.x-k8s.io/"
          + "v1alpha2, CRD installed) and give a request naming one in x-gateway-inference-objective its priority.")
  boolean objectives;

  @Option(names = "--index", defaultValue = "auto", paramLabel = "KIND",
      description = "precise (the servers' KV events), approximate (the router's own decisions) or auto (default: "
          + "precise when a configured endpoint publishes KV events).")
  String index = "auto";

  @Option(names = {"-p", "--port"}, defaultValue = "9002", paramLabel = "PORT",
      description = "gRPC port of the ext_proc and health services (default ${DEFAULT-VALUE}, the reference's).")
  int port;

  @Option(names = "--host", defaultValue = "0.0.0.0", paramLabel = "ADDRESS",
      description = "Address to listen on (default ${DEFAULT-VALUE}).")
  String host = "0.0.0.0";

  @Option(names = "--tenant-header", paramLabel = "NAME",
      description = "Header naming the tenant, set by the proxy in front after its own authentication (it must strip "
          + "the header from what clients send); requests carrying it are not checked for API keys.")
  @Nullable String tenantHeader;

  @Option(names = "--body-mode", defaultValue = "streamed", paramLabel = "MODE",
      description = "Request body mode the proxy uses when its messages do not say: streamed (FULL_DUPLEX_STREAMED, "
          + "default) or buffered.")
  String bodyMode = "streamed";

  @Option(names = "--direct-executor",
      description = "Handle each message on the transport's thread, without a hand-off: lower latency; only with "
          + "the in-memory state store and a local tokenizer (nothing that waits).")
  boolean direct;

  @CommandLine.Mixin
  dev.kinference.cli.StateStoreOptions stateStoreOptions = new dev.kinference.cli.StateStoreOptions();

  @Override
  public Integer call() throws Exception {
    BodySendMode mode = switch (bodyMode.toLowerCase(Locale.ROOT)) {
      case "streamed", "full_duplex_streamed" -> BodySendMode.FULL_DUPLEX_STREAMED;
      case "buffered" -> BodySendMode.BUFFERED;
      default -> throw new CommandLine.ParameterException(new CommandLine(this),
          "--body-mode must be streamed or buffered");
    };
    PrintWriter err = new PrintWriter(System.err, true, java.nio.charset.StandardCharsets.UTF_8);
    PolicyGateway.Builder b = PolicyGateway.builder();
    switch (index) {
      case "precise" -> b.preciseIndex(true);
      case "approximate" -> b.preciseIndex(false);
      case "auto" -> { }
      default -> {
        err.println("kinference epp: --index must be precise, approximate or auto, not " + index);
        return 2;
      }
    }
    if (inferencePool != null) {
      if (discovery != null) {
        err.println("kinference epp: give --inference-pool or --discovery, not both");
        return 2;
      }
      InferencePoolSource.Builder pool = InferencePoolSource.builder();
      try {
        pool.pool(inferencePool);
        if (poolModel != null) {
          pool.defaultModel(poolModel);
        }
      } catch (IllegalArgumentException e) {
        err.println("kinference epp: --inference-pool: " + e.getMessage());
        return 2;
      }
      b.discovery(pool.build());
    } else if (poolModel != null || objectives) {
      err.println("kinference epp: --pool-model and --objectives need --inference-pool");
      return 2;
    }
    if (discovery != null) {
      PluginSet<EndpointSource> sources = Plugins.load(EndpointSource.class);
      Optional<EndpointSource> source = sources.find(discovery);
      if (source.isEmpty()) {
        err.println("kinference epp: no endpoint source named '" + discovery + "'; available: " + sources.names());
        return 2;
      }
      b.discovery(source.get());
    }
    if (!config.isEmpty()) {
      for (Path p : config) {
        if (!Files.exists(p)) {
          err.println("kinference epp: no such file or directory: " + p);
          return 2;
        }
      }
      b.watch(config);
    } else if (discovery != null || inferencePool != null) {
      b.config(PolicyConfig.EMPTY);
    } else {
      err.println("kinference epp: give --config DIR, --discovery NAME or --inference-pool NAMESPACE/NAME, or "
          + "--config with one of the others");
      return 2;
    }
    try {
      b.stateStore(stateStoreOptions.open()).routerReplicas(stateStoreOptions.replicas())
          .peerPrefillSharing(stateStoreOptions.prefillSharing());
    } catch (IllegalArgumentException e) {
      err.println("kinference epp: " + e.getMessage());
      return 2;
    }
    try (PolicyGateway pg = b.build();
        InferenceObjectives priorities = objectives ? InferenceObjectives.of(Objects.requireNonNull(inferencePool))
            : null) {
      if (priorities != null) {
        priorities.start();
      }
      EndpointPicker picker = EndpointPicker.builder().router(pg.router())
          .guard(GovernanceGuard.of(pg.governance())).tenantHeader(tenantHeader).bodyMode(mode)
          .objectives(priorities).build();
      try (EppServer server = EppServer.start(picker, host, port, direct)) {
        System.out.println("kinference epp: ext_proc on " + host + ":" + server.port());
        if (pg.sharesInFlightPrefill()) {
          System.out.println("kinference epp: one of " + stateStoreOptions.replicas() + " pickers, sharing the "
              + "prompt tokens in the servers' prefill through the state store");
        } else if (stateStoreOptions.replicas() > 1) {
          // an operator who asked for several pickers should see that they do not share, and why it may be
          System.out.println("kinference epp: one of " + stateStoreOptions.replicas() + " pickers; the prompt "
              + "tokens in the servers' prefill are this picker's own account (sharing needs the precise index, "
              + "a shared state store and no --no-prefill-sharing)");
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "epp-shutdown"));
        server.awaitTermination();
      }
    }
    return 0;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new EppCommand()).execute(args));
  }
}
