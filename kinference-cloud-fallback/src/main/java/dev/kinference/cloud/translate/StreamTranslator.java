package dev.kinference.cloud.translate;

import dev.kinference.routing.Usage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Turns one upstream event stream into the client's: unchanged when both speak the same format (watching it for
 * usage, content and its end), translated otherwise. Obtain one per response from {@link Translation#stream}.
 *
 * <p>Not thread-safe: feed one stream's events in order from one thread at a time.
 */
public interface StreamTranslator {

  /**
   * Handles one upstream event and passes the client's bytes, zero or more whole events, to {@code out}.
   *
   * @param raw the exact bytes the event occupied upstream, forwarded as they are when no translation is needed
   */
  void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out);

  /**
   * Whether an upstream event so far carried generation (a token, a tool call, a stop), as opposed to preamble
   * (Anthropic's {@code message_start}) or an error. The first such event is the first token.
   */
  boolean sawContent();

  /** Whether the upstream sent its end-of-stream event ({@code data: [DONE]} or {@code message_stop}). */
  boolean complete();

  /** The message of an error event the upstream sent, or null. */
  @Nullable String upstreamError();

  /**
   * Upstream events that carried generated tokens so far. vLLM sends one token per event (unless its stream
   * interval is raised) and providers a few, so this is how many output tokens were relayed when no usage arrived:
   * a stream cut off before its usage report is charged for them.
   */
  int outputEvents();

  /** The usage reported so far; complete once {@link #complete()}. */
  Usage usage();

  /**
   * The id of the Responses API response an upstream that stores responses created ({@code response.created}), or
   * null: another format, not seen yet, or made up by a translation (no upstream holds it).
   */
  default @Nullable String responseId() {
    return null;
  }

  /** The finish reason in the client's format ({@code stop}, {@code end_turn}, ...), or null if none yet. */
  @Nullable String finishReason();
}
