package dev.kinference.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of an external command by a test (a Python script, a template renderer): its exit status and its output,
 * standard error merged in. A command that cannot be started is reported as {@link #started() not started} with the
 * reason as its output, so a test can try the next candidate (python3, python) or fail saying how to install it.
 *
 * @param exit the exit status; {@link #NOT_STARTED} if it could not be started, -1 if it was killed at the timeout
 * @param output what it wrote, or why it did not start or finish
 */
public record CommandRun(int exit, String output) {

  /** The exit status of a command that could not be started. */
  public static final int NOT_STARTED = Integer.MIN_VALUE;

  /** Whether the command started (it may still have failed). */
  public boolean started() {
    return exit != NOT_STARTED;
  }

  /** Runs {@code command} in the current directory, killing it after {@code timeout}. */
  public static CommandRun of(List<String> command, Duration timeout) throws InterruptedException {
    Process process;
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      return new CommandRun(NOT_STARTED, String.valueOf(e.getMessage()));
    }
    String output;
    try (InputStream in = process.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      output = String.valueOf(e.getMessage());
    }
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      return new CommandRun(-1, "did not finish in " + timeout.toSeconds() + " s: " + output);
    }
    return new CommandRun(process.exitValue(), output);
  }
}
