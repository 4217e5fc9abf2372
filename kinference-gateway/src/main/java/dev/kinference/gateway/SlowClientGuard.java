package dev.kinference.gateway;

import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.request.ApiFormat;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * Deadlines for what clients send, on HTTP/1.1 connections, so that slow or careless clients cost a file descriptor
 * for seconds, not minutes. Jetty's idle timeout restarts with every byte, so a client sending one byte a second would
 * hold a connection forever, and the gateway keeps that timeout long on purpose (a request waiting for a slow first
 * token is idle too). A sweep on the gateway's ticker enforces:
 * <ul>
 *   <li>request headers complete within {@code headerTimeout} of their first byte, else 408 and close;</li>
 *   <li>a request's body complete within {@code bodyTimeout} of its headers, else 408 (through the request's own error
 *       path, in the format of the API called);</li>
 *   <li>a connection that rests between requests for {@code keepAliveTimeout} is closed;</li>
 *   <li>at most {@code maxIdlePerClient} resting connections per client address; beyond, the longest resting
 *       ones are closed.</li>
 * </ul>
 * HTTP/2 connections are left to Jetty's HTTP/2 flow control. Thread-safe: request threads mark requests, the ticker
 * sweeps; per-connection state is volatile and written by one request at a time.
 */
final class SlowClientGuard {

  /**
   * @param headerTimeout from a request's first byte to its complete headers
   * @param bodyTimeout from a request's headers to its complete body
   * @param keepAliveTimeout how long a connection may rest between requests
   * @param maxIdlePerClient resting connections one client address may keep
   */
  record Settings(Duration headerTimeout, Duration bodyTimeout, Duration keepAliveTimeout, int maxIdlePerClient) {
    static final Settings DEFAULT = new Settings(Duration.ofSeconds(10), Duration.ofSeconds(30),
        Duration.ofSeconds(60), 256);
  }

  private static final class Tracked {
    final Connection connection;
    final String client;
    volatile boolean handling;
    volatile long handlingSince;
    volatile boolean bodyDone;
    volatile @Nullable Runnable onBodyTimeout;
    volatile long restBytes;
    volatile long restSince;
    volatile long firstNewByteNanos;

    Tracked(Connection connection, String client, long now) {
      this.connection = connection;
      this.client = client;
      this.restSince = now;
    }
  }

  private final Settings settings;
  private final ConcurrentHashMap<Connection, Tracked> tracked = new ConcurrentHashMap<>();

  SlowClientGuard(Settings settings) {
    this.settings = settings;
  }

  /** A new HTTP/1.1 connection to watch. */
  void opened(Connection c) {
    SocketAddress remote = c.getEndPoint().getRemoteSocketAddress();
    String client = remote instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : String.valueOf(remote);
    tracked.put(c, new Tracked(c, client, System.nanoTime()));
    c.addEventListener(new Connection.Listener() {
      @Override
      public void onClosed(Connection connection) {
        tracked.remove(connection);
      }
    });
  }

  /** The handler took a request of {@code c}: its headers are complete. */
  void requestStarted(Connection c) {
    Tracked t = tracked.get(c);
    if (t != null) {
      t.handlingSince = System.nanoTime();
      t.bodyDone = false;
      t.onBodyTimeout = null;
      t.handling = true;
    }
  }

  /** The request's body is being read; {@code onTimeout} answers it 408 if it is not complete in time. */
  void readingBody(Connection c, Runnable onTimeout) {
    Tracked t = tracked.get(c);
    if (t != null) {
      t.onBodyTimeout = onTimeout;
    }
  }

  /** The request's body is complete. */
  void bodyRead(Connection c) {
    Tracked t = tracked.get(c);
    if (t != null) {
      t.bodyDone = true;
      t.onBodyTimeout = null;
    }
  }

  /** The request of {@code c} was answered: the connection rests until its next request. */
  void requestEnded(Connection c) {
    Tracked t = tracked.get(c);
    if (t != null) {
      t.restBytes = c.getBytesIn();
      t.restSince = System.nanoTime();
      t.firstNewByteNanos = 0;
      t.handling = false;
    }
  }

  /** Connections being watched (for tests and metrics). */
  int watched() {
    return tracked.size();
  }

  /** Enforces the deadlines; called by the gateway's ticker. */
  void sweep(long now) {
    Map<String, List<Tracked>> resting = null;
    for (Tracked t : tracked.values()) {
      if (!t.connection.equals(t.connection.getEndPoint().getConnection())) {
        tracked.remove(t.connection); // upgraded (h2c): HTTP/2 governs it now
        continue;
      }
      if (t.handling) {
        Runnable timeout = t.onBodyTimeout;
        if (!t.bodyDone && timeout != null && now - t.handlingSince > settings.bodyTimeout().toNanos()) {
          t.onBodyTimeout = null;
          timeout.run();
        }
        continue;
      }
      long bytes = t.connection.getBytesIn();
      if (bytes > t.restBytes) {
        if (t.firstNewByteNanos == 0) {
          t.firstNewByteNanos = now;
        } else if (now - t.firstNewByteNanos > settings.headerTimeout().toNanos()) {
          timeOut(t.connection, "request headers not received within " + settings.headerTimeout().toSeconds()
              + " s");
        }
        continue;
      }
      if (now - t.restSince > settings.keepAliveTimeout().toNanos()) {
        t.connection.close();
        continue;
      }
      if (resting == null) {
        resting = new HashMap<>();
      }
      resting.computeIfAbsent(t.client, k -> new ArrayList<>()).add(t);
    }
    if (resting != null) {
      for (List<Tracked> idle : resting.values()) {
        if (idle.size() > settings.maxIdlePerClient()) {
          idle.sort(Comparator.comparingLong(t -> t.restSince));
          for (int i = 0; i < idle.size() - settings.maxIdlePerClient(); i++) {
            idle.get(i).connection.close();
          }
        }
      }
    }
  }

  /** 408 with an OpenAI error object (no request line to go by yet), then close. */
  private void timeOut(Connection c, String why) {
    tracked.remove(c);
    byte[] body = ApiErrors.body(ApiFormat.OPENAI_CHAT, 408, why, null);
    byte[] head = ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: "
        + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    c.getEndPoint().write(Callback.from(c::close, x -> c.close()), ByteBuffer.wrap(head), ByteBuffer.wrap(body));
  }
}
