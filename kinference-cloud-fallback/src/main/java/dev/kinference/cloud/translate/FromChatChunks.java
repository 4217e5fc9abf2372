package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.routing.Usage;
import java.util.function.Consumer;

/**
 * Chat Completions chunks in, another format's events out: what every such translator does alike. {@code [DONE]}
 * ends the stream (once; a stream with no chunk is started first), a chunk that is only an error becomes the target
 * format's error event, the first chunk starts the stream, the latest usage is kept, and each choice's delta is the
 * subclass's to translate. Not thread-safe: one stream's events arrive in order.
 */
abstract class FromChatChunks extends Streams.Base {

  private boolean started;

  @Override
  public final void onEvent(SseEvent event, byte[] raw, Consumer<byte[]> out) {
    if (event.isDone()) {
      finish(out);
      return;
    }
    ObjectNode chunk = Json.parseObject(event.data());
    if (chunk == null) {
      return;
    }
    if (chunk.has("error") && !chunk.has("choices")) {
      String message = Streams.errorMessage(chunk);
      error = message;
      out.accept(errorEvent(message));
      return;
    }
    start(chunk, out);
    Usage u = Usages.fromOpenAi(chunk.get("usage"));
    if (u != null) {
      usage = u;
    }
    for (JsonNode choice : chunk.path("choices")) {
      onChoice(choice, out);
    }
  }

  private void start(ObjectNode chunk, Consumer<byte[]> out) {
    if (!started) {
      started = true;
      onStart(chunk, out);
    }
  }

  private void finish(Consumer<byte[]> out) {
    if (complete) {
      return;
    }
    start(Json.object(), out);
    onFinish(out);
    complete = true;
  }

  /** The target format's error event for an upstream error {@code message}. */
  abstract byte[] errorEvent(String message);

  /** The events that open the stream, from the first chunk (an empty object when none came). */
  abstract void onStart(ObjectNode chunk, Consumer<byte[]> out);

  /** One choice of a chunk: its delta's text, reasoning and tool calls, and its finish reason. */
  abstract void onChoice(JsonNode choice, Consumer<byte[]> out);

  /** The events that end the stream, after {@code [DONE]}; usage and finish reason are known. */
  abstract void onFinish(Consumer<byte[]> out);
}
