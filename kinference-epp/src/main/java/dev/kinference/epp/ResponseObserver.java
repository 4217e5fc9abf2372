package dev.kinference.epp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.routing.Usage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads a model server's response as it passes through the proxy, without changing it: the usage it reports, in a
 * JSON body (OpenAI {@code usage.prompt_tokens}/{@code completion_tokens}, Anthropic {@code input_tokens}/{@code
 * output_tokens}) or in server-sent events (each {@code data:} line carrying a usage). Bounded: a non-streamed body
 * larger than {@link #MAX_JSON_BYTES} is not parsed and its usage stays unknown. Not thread-safe (one ext_proc stream
 * is one sequence of calls).
 */
final class ResponseObserver {

  static final int MAX_JSON_BYTES = 4 * 1024 * 1024;
  private static final int MAX_LINE_BYTES = 1024 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final boolean events;
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private boolean overflow;
  private int prompt;
  private int cached;
  private int completion;
  private boolean seen;

  ResponseObserver(boolean events) {
    this.events = events;
  }

  /** A chunk of the response body, in order. */
  void feed(byte[] chunk) {
    if (overflow) {
      return;
    }
    if (!events) {
      if (pending.size() + chunk.length > MAX_JSON_BYTES) {
        overflow = true;
        pending.reset();
        return;
      }
      pending.writeBytes(chunk);
      return;
    }
    int start = 0;
    for (int i = 0; i < chunk.length; i++) {
      if (chunk[i] == '\n') {
        pending.write(chunk, start, i - start);
        line(pending.toByteArray());
        pending.reset();
        start = i + 1;
      }
    }
    if (start < chunk.length) {
      if (pending.size() + chunk.length - start > MAX_LINE_BYTES) {
        pending.reset(); // a line too long to hold: skipped
      } else {
        pending.write(chunk, start, chunk.length - start);
      }
    }
  }

  /** The body ended: what it reported, or {@link Usage#UNKNOWN}. */
  Usage finish() {
    if (events) {
      if (pending.size() > 0) {
        line(pending.toByteArray());
      }
    } else if (!overflow && pending.size() > 0) {
      read(pending.toByteArray(), 0, pending.size());
    }
    pending.reset();
    return seen ? new Usage(prompt, Math.min(cached, prompt), completion) : Usage.UNKNOWN;
  }

  private void line(byte[] line) {
    int n = line.length;
    if (n > 0 && line[n - 1] == '\r') {
      n--;
    }
    if (n < 5 || line[0] != 'd' || line[1] != 'a' || line[2] != 't' || line[3] != 'a' || line[4] != ':') {
      return;
    }
    String text = new String(line, 5, n - 5, StandardCharsets.UTF_8);
    if (!text.contains("usage") || text.contains("[DONE]")) {
      return;
    }
    byte[] json = text.getBytes(StandardCharsets.UTF_8);
    read(json, 0, json.length);
  }

  private void read(byte[] bytes, int offset, int length) {
    JsonNode root;
    try {
      root = JSON.readTree(bytes, offset, length);
    } catch (IOException e) {
      return; // not JSON: the usage stays as it is
    }
    if (root == null || !root.isObject()) {
      return;
    }
    JsonNode usage = root.path("usage");
    if (!usage.isObject()) {
      usage = root.path("message").path("usage"); // Anthropic message_start
    }
    if (!usage.isObject()) {
      return;
    }
    if (usage.has("prompt_tokens") || usage.has("completion_tokens")) {
      seen = true;
      prompt = Math.max(prompt, usage.path("prompt_tokens").asInt(0));
      completion = Math.max(completion, usage.path("completion_tokens").asInt(0));
      cached = Math.max(cached, usage.path("prompt_tokens_details").path("cached_tokens").asInt(0));
    } else if (usage.has("input_tokens") || usage.has("output_tokens")) {
      seen = true;
      int read = usage.path("cache_read_input_tokens").asInt(0);
      int input = usage.path("input_tokens").asInt(0) + read + usage.path("cache_creation_input_tokens").asInt(0);
      prompt = Math.max(prompt, input);
      cached = Math.max(cached, read);
      completion = Math.max(completion, usage.path("output_tokens").asInt(0));
    }
  }
}
