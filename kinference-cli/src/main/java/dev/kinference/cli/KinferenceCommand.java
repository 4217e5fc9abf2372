package dev.kinference.cli;

import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
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

  /** The slf4j-simple property of the default log level, which KINFERENCE_LOG_LEVEL sets. */
  static final String DEFAULT_LOG_LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

  /**
   * The slf4j-simple property of Lettuce's reconnect watchdog, which warns on every reconnect attempt while Redis is
   * down; the state store says once that it is unreachable and once that it answers again.
   */
  static final String LETTUCE_WATCHDOG_LOG_LEVEL =
      "org.slf4j.simpleLogger.log.io.lettuce.core.protocol.ConnectionWatchdog";

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    quietReconnectWarnings();
    String problem = applyLogLevel(System.getenv("KINFERENCE_LOG_LEVEL"));
    if (problem != null) {
      System.err.println("kinference: " + problem);
    }
    System.exit(execute(args));
  }

  /**
   * Sets the default log level (trace, debug, info, warn, error or off) from {@code KINFERENCE_LOG_LEVEL}, before
   * any logger exists; {@code -Dorg.slf4j.simpleLogger.defaultLogLevel} wins. Returns why a value was ignored.
   */
  static @Nullable String applyLogLevel(@Nullable String level) {
    if (level == null || level.isBlank() || System.getProperty(DEFAULT_LOG_LEVEL) != null) {
      return null;
    }
    String l = level.strip().toLowerCase(Locale.ROOT);
    if (l.equals("warning")) {
      l = "warn";
    }
    if (!List.of("trace", "debug", "info", "warn", "error", "off").contains(l)) {
      return "KINFERENCE_LOG_LEVEL=" + level + " ignored: trace, debug, info, warn, error or off";
    }
    System.setProperty(DEFAULT_LOG_LEVEL, l);
    return null;
  }

  /** Lets Lettuce's watchdog log errors only, unless {@code -D} set its level; before any logger exists. */
  static void quietReconnectWarnings() {
    if (System.getProperty(LETTUCE_WATCHDOG_LOG_LEVEL) == null) {
      System.setProperty(LETTUCE_WATCHDOG_LOG_LEVEL, "error");
    }
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
