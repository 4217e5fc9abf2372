package dev.kinference.cloud.translate;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One server-sent event: an optional event name and its data (the {@code data:} lines joined by newlines).
 *
 * @param event the {@code event:} field, or null (OpenAI streams name no events; Anthropic's name every one)
 * @param data the data, without the trailing newline
 */
public record SseEvent(@Nullable String event, String data) {

  /** OpenAI's end-of-stream sentinel. */
  public static final String DONE = "[DONE]";

  public SseEvent {
    Objects.requireNonNull(data, "data");
  }

  /** An unnamed event, as OpenAI streams send. */
  public static SseEvent data(String data) {
    return new SseEvent(null, data);
  }

  /** Whether this is OpenAI's {@code data: [DONE]}. */
  public boolean isDone() {
    return event == null && DONE.equals(data);
  }

  /** The event in wire form, ending with a blank line. */
  public byte[] toBytes() {
    StringBuilder sb = new StringBuilder(data.length() + 32);
    if (event != null) {
      sb.append("event: ").append(event).append('\n');
    }
    int start = 0;
    while (true) {
      int nl = data.indexOf('\n', start);
      sb.append("data: ").append(data, start, nl < 0 ? data.length() : nl).append('\n');
      if (nl < 0) {
        break;
      }
      start = nl + 1;
    }
    sb.append('\n');
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }
}
