package dev.kinference.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One in-process run of the {@code kinference} command line: its exit status and what it printed. */
record CliRun(int status, String out, String err) {

  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(new KinferenceCommand());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int status = cl.execute(args);
    return new CliRun(status, out.toString(), err.toString());
  }
}
