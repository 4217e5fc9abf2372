package dev.kinference.cloud.translate;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Splits a byte stream of server-sent events into {@link SseEvent}s as bytes arrive, following the WHATWG event
 * stream rules: lines end with LF, CRLF or CR; {@code data:} lines accumulate; a blank line dispatches; comments
 * ({@code :...}) and unknown fields are ignored; one space after the colon is dropped.
 *
 * <p>Alongside each event it reports the exact bytes the event occupied, so a proxy can forward events unchanged
 * and still cut the stream only between events. Holds at most one incomplete event; a single line longer than the
 * limit is an error rather than unbounded memory. Not thread-safe: feed it from one thread at a time.
 */
public final class SseParser {

  /**
   * Receives each complete event with the raw bytes it occupied, comments and blank lines before it included. A
   * run of comments or blank lines ended by a blank line with no data (a keep-alive) arrives with a null event, so
   * that a proxy can forward it too.
   */
  @FunctionalInterface
  public interface Listener {
    void onEvent(@Nullable SseEvent event, byte[] raw);
  }

  private final Listener listener;
  private final int maxEventBytes;
  // The bytes of the event being read; lineStart marks where the current line begins within it.
  private byte[] raw = new byte[512];
  private int rawLength;
  private int lineStart;
  private @Nullable StringBuilder data;
  private @Nullable String event;
  private boolean lastWasCr;

  /**
   * @param maxEventBytes the largest event accepted, in bytes
   */
  public SseParser(int maxEventBytes, Listener listener) {
    if (maxEventBytes < 64) {
      throw new IllegalArgumentException("maxEventBytes must be at least 64: " + maxEventBytes);
    }
    this.maxEventBytes = maxEventBytes;
    this.listener = listener;
  }

  /** A parser for events up to 16 MiB that passes only the events on. */
  public static SseParser of(Consumer<SseEvent> events) {
    return new SseParser(16 * 1024 * 1024, (e, raw) -> {
      if (e != null) {
        events.accept(e);
      }
    });
  }

  /**
   * Consumes the buffer's remaining bytes, dispatching every event they complete.
   *
   * @throws IllegalStateException if an event exceeds the size limit
   */
  public void feed(ByteBuffer buffer) {
    if (buffer.hasArray()) {
      int n = buffer.remaining();
      feed(buffer.array(), buffer.arrayOffset() + buffer.position(), n);
      buffer.position(buffer.position() + n);
      return;
    }
    while (buffer.hasRemaining()) {
      feed(buffer.get());
    }
  }

  /** Consumes bytes; see {@link #feed(ByteBuffer)}. */
  public void feed(byte[] bytes, int offset, int length) {
    for (int i = offset; i < offset + length; i++) {
      feed(bytes[i]);
    }
  }

  /** Consumes a string (UTF-8); for tests and small inputs. */
  public void feed(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    feed(b, 0, b.length);
  }

  /**
   * Dispatches a final event that was not followed by a blank line (a stream cut after its last data line), as
   * browsers do not but proxies should, so that nothing the server sent is lost.
   */
  public void finish() {
    if (rawLength > lineStart) {
      endLine(rawLength);
    }
    if (data != null) {
      dispatch();
    }
    rawLength = 0;
    lineStart = 0;
  }

  /** Bytes held for an incomplete event. */
  public int pendingBytes() {
    return rawLength;
  }

  private void feed(byte b) {
    if (rawLength >= maxEventBytes) {
      throw new IllegalStateException("server-sent event larger than " + maxEventBytes + " bytes");
    }
    if (rawLength == raw.length) {
      raw = Arrays.copyOf(raw, Math.min(maxEventBytes, raw.length * 2));
    }
    raw[rawLength++] = b;
    if (b == '\n') {
      if (lastWasCr) {
        lastWasCr = false; // CRLF: the CR already ended the line
        lineStart = rawLength;
        return;
      }
      endLine(rawLength - 1);
    } else if (b == '\r') {
      lastWasCr = true;
      endLine(rawLength - 1);
    } else {
      lastWasCr = false;
    }
  }

  /** Ends the line that runs from lineStart to {@code end} (exclusive). */
  private void endLine(int end) {
    int start = lineStart;
    lineStart = rawLength;
    if (end == start) {
      if (data != null) {
        dispatch();
      } else {
        event = null;
        byte[] bytes = Arrays.copyOf(raw, rawLength);
        rawLength = 0;
        lineStart = 0;
        listener.onEvent(null, bytes);
      }
      return;
    }
    String l = new String(raw, start, end - start, StandardCharsets.UTF_8);
    if (l.charAt(0) == ':') {
      return;
    }
    int colon = l.indexOf(':');
    String field = colon < 0 ? l : l.substring(0, colon);
    String value = colon < 0 ? "" : l.substring(colon + 1 < l.length() && l.charAt(colon + 1) == ' '
        ? colon + 2 : colon + 1);
    switch (field) {
      case "data" -> {
        if (data == null) {
          data = new StringBuilder(value);
        } else {
          data.append('\n').append(value);
        }
      }
      case "event" -> event = value;
      default -> {
        // id, retry and unknown fields carry nothing a proxy or translator needs
      }
    }
  }

  private void dispatch() {
    StringBuilder d = data;
    SseEvent e = new SseEvent(event, d == null ? "" : d.toString());
    byte[] bytes = Arrays.copyOf(raw, rawLength);
    rawLength = 0;
    lineStart = 0;
    data = null;
    event = null;
    listener.onEvent(e, bytes);
  }
}
