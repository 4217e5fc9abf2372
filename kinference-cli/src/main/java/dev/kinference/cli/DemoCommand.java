package dev.kinference.cli;

import dev.kinference.sim.demo.Demo;
import dev.kinference.sim.demo.RouterView;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kinference demo}: the main job. The work is in kinference-sim ({@link Demo}). */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
        "Starts three simulated vLLM servers on 127.0.0.1 (real HTTP and ZMQ, an engine model of an L40S running a "
            + "~27B FP8 model, run faster than real time), embeds the Kinference router in this process, and drives "
            + "a shared-prefix workload through it and then through random routing (what a Kubernetes Service "
            + "does). Prints the side-by-side comparison, writes an HTML report, and says where.",
        "",
        "Takes about a minute and a half. No cluster, no GPU.",
        ""})
public final class DemoCommand implements Callable<Integer> {

  private static final String JETTY_LOG_LEVEL = "org.slf4j.simpleLogger.log.org.eclipse.jetty";

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before call()
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--servers", defaultValue = "3", paramLabel = "N",
      description = "Simulated servers (default: ${DEFAULT-VALUE}).")
  int servers = 3;

  @Option(names = "--concurrency", defaultValue = "32", paramLabel = "N",
      description = "Closed-loop clients (default: ${DEFAULT-VALUE}).")
  int concurrency = 32;

  @Option(names = "--time-scale", defaultValue = "4", paramLabel = "X",
      description = "Simulated seconds per real second (default: ${DEFAULT-VALUE}; 1 = real time).")
  double timeScale = 4;

  @Option(names = "--warmup", defaultValue = "30", paramLabel = "SECONDS",
      description = "Simulated warm-up per router before measuring (default: ${DEFAULT-VALUE}).")
  long warmup = 30;

  @Option(names = "--duration", defaultValue = "90", paramLabel = "SECONDS",
      description = "Simulated seconds measured per router (default: ${DEFAULT-VALUE}).")
  long duration = 90;

  @Option(names = "--seed", defaultValue = "20250611", paramLabel = "N",
      description = "Seed of the workload and of random routing (default: ${DEFAULT-VALUE}).")
  long seed = 20_250_611L;

  @Option(names = "--out", defaultValue = "kinference-report", paramLabel = "DIR",
      description = "Directory for the report (default: ${DEFAULT-VALUE}).")
  Path out = Path.of("kinference-report");

  @Option(names = "--index", defaultValue = "precise", paramLabel = "KIND",
      description = "How the router knows what each server caches: precise (the servers' KV events over ZeroMQ, and "
          + "their /metrics) or approximate (its own decisions only) (default: ${DEFAULT-VALUE}).")
  String index = "precise";

  @Override
  public Integer call() {
    // the servers' start and stop lines would drown the table; an explicit setting still wins
    if (System.getProperty(JETTY_LOG_LEVEL) == null) {
      System.setProperty(JETTY_LOG_LEVEL, "warn");
    }
    PrintStream stdout = new PrintStream(new LineWriterOutputStream(spec.commandLine().getOut()), true,
        StandardCharsets.UTF_8);
    Demo.Options options;
    try {
      RouterView view = switch (index) {
        case "precise" -> new KvEventsDemoView();
        case "approximate" -> RouterView.ROUTER_ACCOUNTING;
        default -> throw new IllegalArgumentException("--index must be precise or approximate, not " + index);
      };
      options = Demo.Options.builder().servers(servers).concurrency(concurrency).timeScale(timeScale)
          .warmup(Duration.ofSeconds(warmup)).measure(Duration.ofSeconds(duration)).seed(seed).reportDir(out)
          .view(view).build();
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("kinference demo: " + e.getMessage());
      return 2;
    }
    stdout.printf("kinference demo: about %.0f s%n", 2 * options.wallSecondsPerRouter() + 10);
    try {
      Demo.of(options).run(stdout);
      return 0;
    } catch (java.io.UncheckedIOException e) {
      spec.commandLine().getErr().println("kinference demo: " + e.getMessage());
      return 1;
    }
  }
}
