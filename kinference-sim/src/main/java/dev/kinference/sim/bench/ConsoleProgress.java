package dev.kinference.sim.bench;

import java.io.Console;
import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar for long benchmark runs, redrawn in place on a terminal; written to a file or a pipe it
 * prints one line per run instead, so logs hold no carriage-return redraws. Not thread-safe.
 */
public final class ConsoleProgress implements Benchmark.Progress {

  private static final int WIDTH = 30;

  private final PrintStream out;
  private final boolean redraw;
  private final long startNanos = System.nanoTime();
  private int lastPermille = -1;
  private String lastLabel = "";
  private int lastRun = -1;

  /** A progress bar redrawn in place when standard output is a terminal, one line per run otherwise. */
  public ConsoleProgress(PrintStream out) {
    this(out, standardOutputIsTerminal());
  }

  ConsoleProgress(PrintStream out, boolean redraw) {
    this.out = out;
    this.redraw = redraw;
  }

  /**
   * Whether standard output is an interactive terminal. Since JDK 22 {@code System.console()} exists when output is
   * redirected too and {@code Console.isTerminal()} tells; it is called reflectively because the project targets
   * Java 21, where a console exists only on a terminal.
   */
  @SuppressWarnings("SystemConsoleNull") // null still means "no terminal" on Java 21; isTerminal() answers after it
  public static boolean standardOutputIsTerminal() {
    Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
    } catch (NoSuchMethodException e) {
      return true;
    } catch (ReflectiveOperationException | ClassCastException e) {
      return false;
    }
  }

  @Override
  public void update(int runIndex, int runCount, String label, double runFraction) {
    if (!redraw) {
      if (runIndex != lastRun && runIndex < runCount) {
        lastRun = runIndex;
        out.printf(Locale.ROOT, "run %d/%d %s%n", runIndex + 1, runCount, label);
        out.flush();
      }
      return;
    }
    double overall = (runIndex + Math.min(1, runFraction)) / runCount;
    int permille = (int) (overall * 1000);
    if (permille == lastPermille && label.equals(lastLabel)) {
      return;
    }
    lastPermille = permille;
    lastLabel = label;
    int filled = (int) (overall * WIDTH);
    double elapsed = (System.nanoTime() - startNanos) / 1e9;
    String eta = overall > 0.01 ? String.format(Locale.ROOT, " eta %.0fs", elapsed / overall - elapsed) : "";
    out.printf(Locale.ROOT, "\r[%s%s] %5.1f%% run %d/%d %-60.60s%s", "#".repeat(filled), ".".repeat(WIDTH - filled),
        overall * 100, Math.min(runCount, runIndex + 1), runCount, label, eta);
    out.flush();
  }

  @Override
  public void done() {
    if (!redraw) {
      return;
    }
    out.printf(Locale.ROOT, "\r%-130s\r", "");
    out.flush();
  }
}
