package dev.kinference.cli;

import dev.kinference.policy.check.Explainer;
import dev.kinference.policy.check.PolicyChecker;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.RequestParser;
import dev.kinference.request.TrafficClass;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kinference check PATH...}: validates policy files with the runtime's own validation and prints every
 * problem as {@code file:line:column: severity: message}; exits 1 on errors (or on warnings with {@code --strict}).
 * With {@code --explain request.json} it also shows which rules the request fires and where it would go.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
    description = {"Validate policy YAML files (every problem at once, as file:line:column: message).",
        "With --explain, show which rules a request fires and where it would go."},
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {"0:the configuration is valid", "1:errors (or warnings with --strict)", "2:usage error"})
public final class CheckCommand implements Callable<Integer> {

  @Parameters(arity = "1..*", paramLabel = "PATH", description = "Policy files, or directories of *.yaml files.")
  @SuppressWarnings("NullAway.Init") // set by picocli
  List<Path> paths;

  @Option(names = "--explain", paramLabel = "REQUEST.json",
      description = "A request body (OpenAI chat by default) to explain against the configuration.")
  @Nullable Path explain;

  @Option(names = "--tenant", paramLabel = "T", description = "The tenant sending the explained request.")
  @Nullable String tenant;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "openai-chat",
      description = "Format of the request body: openai-chat, openai-completions or anthropic (default: ${DEFAULT-VALUE}).")
  String format = "openai-chat";

  @Option(names = "--batch",
      description = "Explain the request as batch traffic (default: the tenant's traffic.defaultClass).")
  boolean batch;

  @Option(names = "--session", paramLabel = "ID", description = "The explained request's session id.")
  @Nullable String session;

  @Option(names = "--saturated", paramLabel = "POOL", split = ",",
      description = "Pools to assume saturated while explaining (repeatable or comma-separated).")
  List<String> saturated = new ArrayList<>();

  @Option(names = "--strict", description = "Fail on warnings (such as rules shadowed by earlier rules) too.")
  boolean strict;

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (explain == null && (tenant != null || batch || session != null || !saturated.isEmpty())) {
      err.println("--tenant, --batch, --session and --saturated only apply with --explain");
      return 2;
    }
    int status = PolicyChecker.run(paths, strict, out);
    Path requestFile = explain;
    if (requestFile == null) {
      return status;
    }
    LoadResult loaded = PolicyChecker.check(paths);
    PolicyConfig config = loaded.config();
    if (config == null) {
      err.println("cannot explain: the configuration has errors");
      return PolicyChecker.PROBLEMS;
    }
    InferenceRequest request;
    try {
      ApiFormat f = switch (format.toLowerCase(Locale.ROOT)) {
        case "openai-chat", "openai", "chat" -> ApiFormat.OPENAI_CHAT;
        case "openai-completions", "completions" -> ApiFormat.OPENAI_COMPLETIONS;
        case "anthropic", "anthropic-messages", "messages" -> ApiFormat.ANTHROPIC_MESSAGES;
        default -> throw new CommandLine.ParameterException(spec.commandLine(),
            "unknown --format '" + format + "': use openai-chat, openai-completions or anthropic");
      };
      request = RequestParser.defaults().parse(f, Files.readAllBytes(requestFile));
    } catch (IOException e) {
      err.println(requestFile + ": cannot read: " + e.getMessage());
      return 2;
    } catch (InvalidRequestException e) {
      err.println(requestFile + ": invalid request: " + e.getMessage());
      return 2;
    }
    InferenceRequest.Builder b = request.toBuilder().tenant(tenant);
    // as the gateway does: the tenant's traffic policy gives the class and priority, the request chooses within it
    Tenant t = tenant == null ? null : config.tenant(tenant);
    Tenant.Traffic traffic = t == null ? Tenant.Traffic.DEFAULT : t.spec().traffic();
    b.trafficClass(traffic.classFor(batch ? TrafficClass.BATCH : null));
    var json = request.body();
    b.priority(json != null && json.hasNonNull("priority") ? traffic.clampPriority(request.priority())
        : traffic.priority());
    if (session != null) {
      b.sessionId(session);
    }
    out.println();
    out.print(Explainer.explain(config, b.build(), Set.copyOf(saturated)));
    out.flush();
    return status;
  }
}
