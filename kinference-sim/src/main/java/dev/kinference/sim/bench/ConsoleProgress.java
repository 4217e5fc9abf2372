package dev.kinference.sim.bench;

import java.io.PrintStream;
import java.util.Locale;

/** A one-line progress bar for long benchmark runs, redrawn in place. Not thread-safe. */
public final class ConsoleProgress implements Benchmark.Progress {

  private static final int WIDTH = 30;

  private final PrintStream out;
  private final long startNanos = System.nanoTime();
  private int lastPermille = -1;
  private String lastLabel = "";

  public ConsoleProgress(PrintStream out) {
    this.out = out;
  }

  @Override
  public void update(int runIndex, int runCount, String label, double runFraction) {
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
    out.printf(Locale.ROOT, "\r%-130s\r", "");
    out.flush();
  }
}
