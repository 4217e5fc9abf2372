package dev.kinference.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.cloud.translate.Usages;
import dev.kinference.routing.Usage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay phase of an {@link Exchange}: hands the current {@link Attempt}'s answer to the client, a complete
 * response translated at once, a stream event by event at the client's pace (at most one write outstanding: the
 * next upstream chunk is asked for when the client took the last). Until the first content the answer is not
 * committed and a failure goes back to {@link Dispatch} for a retry; after it, a failure ends the stream with an
 * error event. State lives in the exchange, under its lock.
 */
final class Relay {

  private static final Logger log = LoggerFactory.getLogger(Exchange.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpField SSE_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/event-stream");
  private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");

  private final Exchange x;
  private final Response response;

  Relay(Exchange x, Response response) {
    this.x = x;
    this.response = response;
  }

  // ---- complete responses ----

  void fullBody(Attempt a, byte[] bytes) {
    ObjectNode node;
    try {
      node = MAPPER.readTree(bytes) instanceof ObjectNode o ? o : null;
    } catch (IOException e) {
      node = null;
    }
    if (node == null) {
      x.dispatch.retry(a, "bad_body", 502, "the response was not a JSON object");
      return;
    }
    Usage u = Usages.ofResponse(a.prepared.upstreamFormat(), node);
    // no usage in the body: its output is estimated from the text (charged() adds the prompt)
    Usage usage = u == null ? new Usage(0, 0, OutputEstimate.ofResponse(node)) : u;
    byte[] out = bytes;
    // the client sees the model name it asked for: an alias or a policy's rewrite must not show through
    String clientModel = x.req().model();
    boolean renamed = node.hasNonNull("model") && !clientModel.equals(node.path("model").asText());
    if (a.prepared.upstreamFormat() != x.format || renamed) {
      try {
        ObjectNode answer = a.prepared.upstreamFormat() != x.format
            ? Translation.response(node, a.prepared.upstreamFormat(), x.format) : node;
        if (answer.hasNonNull("model")) {
          answer.put("model", clientModel);
        }
        out = MAPPER.writeValueAsBytes(answer);
      } catch (IOException | RuntimeException e) {
        x.dispatch.retry(a, "untranslatable", 502, "response translation failed: " + e);
        return;
      }
    }
    synchronized (x) {
      if (a != x.attempt || x.finished) {
        return;
      }
      x.finished = true;
      x.committed = true;
      x.firstByteNanos = System.nanoTime();
    }
    x.trace.firstToken(a.span, System.nanoTime() - x.arrivalNanos);
    a.decision.reportFinished(usage);
    x.g.responseChains.answered(x.req(), a.endpoint(), a.prepared.upstreamFormat(), node);
    x.stopWatching();
    response.setStatus(200);
    response.getHeaders().put(Exchange.JSON_TYPE);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, out.length);
    addDebugHeaders(a);
    byte[] written = out;
    response.write(true, ByteBuffer.wrap(written), Callback.from(
        () -> x.done(a, 200, usage, null),
        failure -> x.done(a, 200, usage, "client_disconnect")));
  }

  // ---- streams ----

  void streamData(Attempt a, List<ByteBuffer> buffers) {
    byte[] toWrite = null;
    boolean more = false;
    boolean failBeforeContent = false;
    String upstreamError = null;
    boolean overflow = false;
    StreamTranslator t = Objects.requireNonNull(a.translator);
    synchronized (x) {
      if (a != x.attempt || x.finished || a.cancelled) {
        a.cancel();
        return;
      }
      a.lastActivityNanos = System.nanoTime();
      try {
        for (ByteBuffer b : buffers) {
          Objects.requireNonNull(a.parser).feed(b);
        }
      } catch (IllegalStateException e) {
        overflow = true;
      }
      if (!overflow) {
        if (!x.committed) {
          if (!t.sawContent()) {
            if (t.upstreamError() != null) {
              failBeforeContent = true;
              upstreamError = t.upstreamError();
            } else {
              a.preamble.addAll(a.out);
              a.out.clear();
              more = true;
            }
          } else {
            toWrite = commitBuffered(a);
            x.writing = true;
          }
        } else if (a.out.isEmpty()) {
          more = true;
        } else {
          toWrite = concat(a.out);
          a.out.clear();
          x.writing = true;
        }
      }
    }
    if (overflow) {
      if (x.isCommitted()) {
        midStreamFailure(a, "upstream event too large");
      } else {
        x.dispatch.retry(a, "bad_body", 502, "upstream event too large");
      }
      return;
    }
    if (failBeforeContent) {
      x.dispatch.retry(a, "error_event", 502, "error event: " + upstreamError);
      return;
    }
    if (toWrite != null) {
      startStream(a);
      write(a, toWrite);
    } else if (more) {
      a.requestMore();
    }
  }

  /** Marks the response committed and takes everything buffered so far. The caller holds the exchange's lock. */
  private byte[] commitBuffered(Attempt a) {
    x.committed = true;
    x.firstByteNanos = System.nanoTime();
    a.preamble.addAll(a.out);
    a.out.clear();
    byte[] all = concat(a.preamble);
    a.preamble.clear();
    return all;
  }

  /** Before a stream's first bytes: the router learns of the first token, and the stream's headers are set. */
  private void startStream(Attempt a) {
    if (!a.sawFirstToken) {
      a.sawFirstToken = true;
      x.trace.firstToken(a.span, System.nanoTime() - x.arrivalNanos);
      a.decision.reportFirstToken();
      x.stopWatching();
      response.setStatus(200);
      response.getHeaders().put(SSE_TYPE);
      response.getHeaders().put(NO_CACHE);
      addDebugHeaders(a);
    }
  }

  private void write(Attempt a, byte[] bytes) {
    response.write(false, ByteBuffer.wrap(bytes), new Callback() {
      @Override
      public void succeeded() {
        byte[] end;
        synchronized (x) {
          x.writing = false;
          end = x.pendingEnd;
          x.pendingEnd = null;
          if (end != null) {
            x.writing = true;
          }
        }
        if (end != null) {
          writeLast(a, end, false);
        } else {
          a.requestMore();
        }
      }

      @Override
      public void failed(Throwable failure) {
        byte[] end;
        synchronized (x) {
          x.writing = false;
          end = x.pendingEnd;
          x.pendingEnd = null;
        }
        if (end != null) {
          // The stream had ended and its last bytes waited behind this write: the exchange is finished, so
          // clientGone would ignore it; it is recorded and charged here (regression: never settled, never answered).
          StreamTranslator t = a.translator;
          x.done(a, 200, t == null ? Usage.UNKNOWN : t.usage(), "client_disconnect");
          return;
        }
        x.clientGone(failure);
      }
    });
  }

  void streamEnd(Attempt a, @Nullable Throwable error) {
    StreamTranslator t = Objects.requireNonNull(a.translator);
    byte[] toWrite;
    boolean ok;
    synchronized (x) {
      if (a != x.attempt || x.finished || a.cancelled) {
        return;
      }
      if (error == null) {
        Objects.requireNonNull(a.parser).finish();
      }
      ok = error == null && t.complete() && t.upstreamError() == null;
      if (!x.committed) {
        if (!ok || (!t.sawContent() && a.preamble.isEmpty() && a.out.isEmpty())) {
          toWrite = null;
        } else {
          toWrite = commitBuffered(a);
        }
      } else {
        toWrite = concat(a.out);
        a.out.clear();
      }
      if (toWrite != null && ok) {
        x.finished = true;
      }
    }
    if (toWrite == null) {
      x.dispatch.retry(a, error != null ? "io" : t.upstreamError() != null ? "error_event" : "truncated", 502,
          error != null ? Dispatch.describe(error) : t.upstreamError() != null ? "error event: " + t.upstreamError()
              : "the stream ended before any content");
      return;
    }
    if (!ok) {
      String reason = error != null
          ? "upstream " + a.endpoint().id() + " failed mid-stream: " + Dispatch.describe(error)
          : t.upstreamError() != null ? null
          : "upstream " + a.endpoint().id() + " ended the stream early";
      midStreamFailure(a, reason, toWrite);
      return;
    }
    startStream(a);
    a.decision.reportFinished(t.usage());
    x.g.responseChains.streamed(x.req(), a.endpoint(), a.prepared.upstreamFormat(), t);
    boolean deferred;
    synchronized (x) {
      deferred = x.writing;
      if (deferred) {
        x.pendingEnd = toWrite;
      } else {
        x.writing = true;
      }
    }
    if (!deferred) {
      writeLast(a, toWrite, false);
    }
  }

  void midStreamFailure(Attempt a, @Nullable String reason) {
    midStreamFailure(a, reason, new byte[0]);
  }

  /** Ends a committed stream with an error event of the client's API (unless the upstream's was forwarded). */
  private void midStreamFailure(Attempt a, @Nullable String reason, byte[] before) {
    boolean deferred;
    byte[] end;
    synchronized (x) {
      if (a != x.attempt || x.finished) {
        return;
      }
      x.finished = true;
      byte[] event = reason == null ? new byte[0] : ApiErrors.streamEvent(x.format, 502, reason);
      end = concat(List.of(before, event));
      deferred = x.writing;
      if (deferred) {
        x.pendingEnd = end;
      } else {
        x.writing = true;
      }
    }
    a.cancel();
    a.decision.reportFailed();
    a.end("mid_stream");
    if (!deferred) {
      writeLast(a, end, true);
    }
    log.debug("Stream through {} failed: {}", a.endpoint().id(), reason);
  }

  private void writeLast(Attempt a, byte[] bytes, boolean failed) {
    StreamTranslator t = a.translator;
    Usage usage = t == null ? Usage.UNKNOWN : t.usage();
    boolean failedStream = failed || (t != null && (t.upstreamError() != null || !t.complete()));
    response.write(true, ByteBuffer.wrap(bytes), Callback.from(
        () -> x.done(a, 200, usage, failedStream ? "mid_stream" : null),
        failure -> x.done(a, 200, usage, "client_disconnect")));
  }

  private void addDebugHeaders(Attempt a) {
    if (x.g.debugHeaders) {
      response.getHeaders().put("x-kinference-endpoint", a.endpoint().id());
      response.getHeaders().put("x-kinference-cached-tokens", a.decision.cachedPrefixTokens());
      String source = a.decision.request().sessionSource();
      if (source != null) {
        response.getHeaders().put("x-kinference-session-source", source);
      }
    }
  }

  private static byte[] concat(List<byte[]> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }
}
