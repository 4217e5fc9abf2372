package dev.kinference.sim.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import dev.kinference.sim.workload.ClientRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Sends a chat completion to a vLLM-compatible server with {@code java.net.http}, streaming, and watches the chunks
 * go by: when the first token came, the longest pause between chunks, and the usage the server reports at the end.
 *
 * <p>Thread-safe; each call blocks its (virtual) thread until the stream ends. {@link #cancelAll} cuts every open
 * stream, for runs that must end on time.
 */
final class StreamingChatClient {

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * What happened to one request, in {@link System#nanoTime()} terms.
   *
   * @param firstTokenNanos when the first content chunk arrived, or -1
   * @param finishNanos when the stream ended with {@code [DONE]}, or -1 if it did not
   * @param maxGapNanos the longest pause between two content chunks
   * @param error why it failed, or null
   */
  record Exchange(long firstTokenNanos, long finishNanos, long maxGapNanos, int promptTokens, int completionTokens,
      int cachedTokens, String finishReason, @org.jspecify.annotations.Nullable String error) {

    boolean finished() {
      return finishNanos >= 0 && error == null;
    }
  }

  /** Watches a stream as it arrives, on the sending thread. */
  interface Watcher {
    /** The first content chunk arrived (report it to the router at once). */
    void onFirstToken();

    /** A content chunk arrived {@code nanos} after the previous one. */
    void onGap(long nanos);
  }

  private final HttpClient http;
  private final Set<Stream<String>> open = ConcurrentHashMap.newKeySet();

  StreamingChatClient() {
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
  }

  /** The OpenAI chat body of a workload request: streaming, with usage, exactly {@code maxTokens} generated. */
  static byte[] body(ClientRequest r) {
    InferenceRequest request = r.request();
    ObjectNode root = JSON.createObjectNode();
    root.put("model", request.model());
    ArrayNode messages = root.putArray("messages");
    for (Message m : request.messages()) {
      StringBuilder text = new StringBuilder();
      for (ContentPart p : m.content()) {
        if (p instanceof ContentPart.Text t) {
          text.append(t.text());
        }
      }
      messages.addObject().put("role", m.role()).put("content", text.toString());
    }
    root.put("max_tokens", r.maxTokens());
    root.put("ignore_eos", true);
    root.put("stream", true);
    root.putObject("stream_options").put("include_usage", true);
    try {
      return JSON.writeValueAsBytes(root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Exchange send(URI base, byte[] body, Watcher watcher) {
    long first = -1;
    long last = -1;
    long maxGap = 0;
    int prompt = 0;
    int completion = 0;
    int cached = 0;
    String finishReason = "";
    HttpRequest request = HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
        .header("Content-Type", "application/json").timeout(Duration.ofMinutes(10))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    try {
      HttpResponse<Stream<String>> response = http.send(request, HttpResponse.BodyHandlers.ofLines());
      if (response.statusCode() != 200) {
        String detail;
        try (Stream<String> lines = response.body()) {
          detail = String.join(" ", lines.toList());
        }
        return new Exchange(-1, -1, 0, 0, 0, 0, "", "HTTP " + response.statusCode() + ": " + detail);
      }
      Stream<String> lines = response.body();
      open.add(lines);
      try {
        Iterator<String> it = lines.iterator();
        while (it.hasNext()) {
          String line = it.next();
          if (!line.startsWith("data: ")) {
            continue;
          }
          long now = System.nanoTime();
          if (line.equals("data: [DONE]")) {
            return new Exchange(first, now, maxGap, prompt, completion, cached, finishReason, null);
          }
          if (line.contains("\"choices\":[]")) {
            JsonNode usage = JSON.readTree(line.substring(6)).path("usage");
            prompt = usage.path("prompt_tokens").asInt();
            completion = usage.path("completion_tokens").asInt();
            cached = usage.path("prompt_tokens_details").path("cached_tokens").asInt();
            continue;
          }
          int finish = line.indexOf("\"finish_reason\":\"");
          if (finish >= 0) {
            int from = finish + "\"finish_reason\":\"".length();
            finishReason = line.substring(from, line.indexOf('"', from));
          }
          if (line.contains("\"delta\":{\"content\":")) {
            if (first < 0) {
              first = now;
              watcher.onFirstToken();
            } else {
              maxGap = Math.max(maxGap, now - last);
              watcher.onGap(now - last);
            }
            last = now;
          }
        }
        return new Exchange(first, -1, maxGap, prompt, completion, cached, finishReason, "stream ended early");
      } finally {
        open.remove(lines);
        lines.close();
      }
    } catch (IOException | RuntimeException e) {
      return new Exchange(first, -1, maxGap, prompt, completion, cached, finishReason, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Exchange(first, -1, maxGap, prompt, completion, cached, finishReason, "interrupted");
    }
  }

  /** Cuts every stream still open. */
  void cancelAll() {
    for (Stream<String> s : open) {
      s.close();
    }
    open.clear();
  }
}
