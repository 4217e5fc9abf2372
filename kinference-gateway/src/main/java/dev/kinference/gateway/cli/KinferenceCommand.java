package dev.kinference.gateway.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code kinference} command. Each task is a subcommand in its own class, listed here; every command has
 * {@code --help}.
 */
@Command(
    name = "kinference",
    mixinStandardHelpOptions = true,
    versionProvider = KinferenceCommand.Version.class,
    description = "Cache-aware routing for vLLM fleets: simulate, benchmark, check policies, serve.",
    subcommands = {
        CommandLine.HelpCommand.class,
        DemoCommand.class,
        ServeCommand.class,
        UsageCommand.class,
        BenchCommand.class,
        CheckCommand.class,
        InspectCommand.class,
        SimServersCommand.class,
    })
public final class KinferenceCommand implements Runnable {

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before run()
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit status; for tests. */
  public static int execute(String... args) {
    return new CommandLine(new KinferenceCommand()).execute(args);
  }

  /** The version from the jar's manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = KinferenceCommand.class.getPackage().getImplementationVersion();
      return new String[] {"kinference " + (v == null ? "development build" : v)};
    }
  }
}
