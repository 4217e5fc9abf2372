package dev.kinference.cli;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * Bridges picocli's writer to the print stream the simulator's reports write to, a line (or a progress redraw,
 * ended by a carriage return) at a time. Not thread-safe: one command writes to it.
 */
final class LineWriterOutputStream extends OutputStream {
  private final PrintWriter writer;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  LineWriterOutputStream(PrintWriter writer) {
    this.writer = writer;
  }

  @Override
  public void write(int b) {
    line.write(b);
    if (b == '\n' || b == '\r') {
      flush();
    }
  }

  @Override
  public void flush() {
    writer.write(line.toString(StandardCharsets.UTF_8));
    writer.flush();
    line.reset();
  }
}
