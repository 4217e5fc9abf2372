package dev.kinference.sim.workload;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

/**
 * The command line the trace writers share ({@code java ... ToolAgentTrace OUT [...]} and the like): the arguments
 * counted, the trace synthesised and written to {@code OUT} in the Mooncake format, one line of summary; a bad number
 * or shape is one line on standard error and exit status 2, not a stack trace. Called from {@code main} only.
 */
final class TraceWriterMain {

  private TraceWriterMain() {}

  /**
   * Writes the trace {@code synthesis} makes of {@code args} (the first is the output file) and prints its summary.
   *
   * @param name the writer's class name, for messages
   * @param usage the arguments after the class name, for the usage line
   * @param maxArgs the most arguments accepted
   */
  static void run(String name, String usage, int maxArgs, String[] args,
      Function<String[], List<MooncakeTrace.Entry>> synthesis, Function<List<MooncakeTrace.Entry>, String> summary)
      throws IOException {
    if (args.length < 1 || args.length > maxArgs) {
      System.err.println("usage: " + name + " " + usage);
      System.exit(2);
    }
    List<MooncakeTrace.Entry> entries;
    try {
      entries = synthesis.apply(args);
    } catch (IllegalArgumentException e) { // a bad number or shape: say which
      System.err.println(name + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    try (Writer w = Files.newBufferedWriter(Path.of(args[0]), StandardCharsets.UTF_8)) {
      MooncakeTrace.write(entries, w);
    } catch (IOException e) { // a missing folder or a read-only file: one line, as for a bad argument
      System.err.println(name + ": cannot write " + args[0] + ": " + e);
      System.exit(2);
      return;
    }
    System.out.println(summary.apply(entries) + " -> " + args[0]);
  }

  /** Argument {@code i} parsed, or an {@link IllegalArgumentException} naming the argument and its value. */
  private static <T> T number(String[] args, int i, Function<String, T> parse) {
    try {
      return parse.apply(args[i]);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("argument " + (i + 1) + " must be a number: '" + args[i] + "'", e);
    }
  }

  /** Argument {@code i} as an int, or {@code fallback} when absent. */
  static int intArg(String[] args, int i, int fallback) {
    return args.length > i ? number(args, i, Integer::parseInt) : fallback;
  }

  /** Argument {@code i} as a double, or {@code fallback} when absent. */
  static double doubleArg(String[] args, int i, double fallback) {
    return args.length > i ? number(args, i, Double::parseDouble) : fallback;
  }

  /** Argument {@code i} as a long, or {@code fallback} when absent. */
  static long longArg(String[] args, int i, long fallback) {
    return args.length > i ? number(args, i, Long::parseLong) : fallback;
  }
}
