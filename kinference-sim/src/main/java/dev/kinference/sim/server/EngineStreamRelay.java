package dev.kinference.sim.server;

import java.io.IOException;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The loop every streamed answer of a simulated server runs, whatever its API: the engine's steps become the words
 * of the answer, the first step starts the stream (status and headers, then the API's opening events), an engine
 * failure is a 500 before anything was sent and a cut connection after, as vLLM's is, and a client gone aborts the
 * engine's request. What the stream carries is the {@link Format}'s. Stateless.
 */
final class EngineStreamRelay {

  private EngineStreamRelay() {}

  /** What one API writes at each point of its stream; an instance serves one answer. */
  interface Format {
    /** The API's error body for an engine failure before anything was sent. */
    byte[] failureBody(String reason);

    /** The events before the first text; the stream's status and headers are set. */
    void start(Response response) throws IOException;

    /** The text of the words from the last step; {@code sent} words are out with it. */
    void text(Response response, String piece, int sent) throws IOException;

    /**
     * The end, after {@code sent} words ({@code started} false when no step produced any): the last events, written
     * with {@code last} set so that {@code callback} completes the exchange.
     */
    void finish(Response response, Callback callback, ResponseStream.Finished finished, int sent, boolean started)
        throws IOException;
  }

  /** Relays {@code stream}'s events for {@code call} in {@code format} until the answer ends or fails. */
  static void relay(SimulatedServer server, SimHttpHandler.Call call, ResponseStream stream, Format format,
      Response response, Callback callback) throws IOException, InterruptedException {
    int sent = 0;
    boolean started = false;
    try {
      while (true) {
        ResponseStream.Event event = stream.next();
        switch (event) {
          case ResponseStream.Failed f -> {
            if (!started) {
              SimHttpHandler.send(response, callback, 500, SimHttpHandler.JSON, format.failureBody(f.reason()));
            } else {
              callback.failed(new IOException("engine stopped: " + f.reason()));
            }
            return;
          }
          case ResponseStream.Tokens t -> {
            if (!started) {
              started = true;
              SimHttpHandler.startStream(response);
              format.start(response);
            }
            int to = Math.min(call.words.length, sent + t.count());
            String piece = server.text().text(call.words, sent, to);
            sent = to;
            format.text(response, piece, sent);
          }
          case ResponseStream.Finished f -> {
            format.finish(response, callback, f, sent, started);
            return;
          }
        }
      }
    } catch (IOException e) {
      stream.abort();
      throw e;
    }
  }
}
