package dev.kinference.gateway;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * Notices that an HTTP/1.1 client closed its connection while the gateway waits for an upstream's answer and writes
 * nothing. Jetty reads an HTTP/1 connection only when the handler asks for body content, so once the body has been
 * read a closed socket goes unseen until the response is written, and the upstream would go on generating for a
 * client that has left (HTTP/2 clients reset their stream, which Jetty reports). Armed, this watcher asks the
 * endpoint for read interest itself; when the socket turns readable and reading gives end-of-stream, it closes the
 * connection, which fails the request and runs its failure listeners, the gateway's one path for a client that went
 * away.
 *
 * <p>Bytes that arrive while armed (a pipelined request) are discarded, so a watched response is sent with {@code
 * Connection: close}; the gateway arms it only for a request that has waited a while (a short one keeps its
 * keep-alive). Thread-safe: armed from the ticker, run by a selector thread, disarmed before the response is written.
 */
final class ClientDisconnect implements Callback {

  private final Connection connection;
  private final java.util.concurrent.Executor executor;
  private final ByteBuffer scratch = BufferUtil.allocate(1024);
  private volatile boolean disarmed;

  private ClientDisconnect(Connection connection, java.util.concurrent.Executor executor) {
    this.connection = connection;
    this.executor = executor;
  }

  /**
   * Closes the connection on the server's pool: closing runs the request's failure listeners, which end the
   * exchange and settle it (a round trip to a shared state store), work a selector thread must not wait on.
   */
  private void close() {
    executor.execute(connection::close);
  }

  /** A watcher over {@code request}'s connection, or null (HTTP/2, or Jetty is reading it already). */
  static @Nullable ClientDisconnect arm(Request request) {
    HttpVersion v = request.getConnectionMetaData().getHttpVersion();
    if (v != HttpVersion.HTTP_1_1 && v != HttpVersion.HTTP_1_0) {
      return null;
    }
    Connection c = request.getConnectionMetaData().getConnection();
    ClientDisconnect w = new ClientDisconnect(c, request.getContext());
    return c.getEndPoint().tryFillInterested(w) ? w : null;
  }

  /** Stops watching; call before the response is written. */
  void disarm() {
    disarmed = true;
  }

  @Override
  public void succeeded() {
    EndPoint endPoint = connection.getEndPoint();
    try {
      while (!disarmed) {
        BufferUtil.clear(scratch);
        int n = endPoint.fill(scratch);
        if (n < 0) {
          close();
          return;
        }
        if (n == 0) {
          endPoint.tryFillInterested(this);
          return;
        }
        // n > 0: a pipelined request, dropped (the response closes the connection)
      }
    } catch (IOException e) {
      failed(e);
    }
  }

  @Override
  public void failed(Throwable x) {
    if (!disarmed) {
      close();
    }
  }

  @Override
  public InvocationType getInvocationType() {
    return InvocationType.NON_BLOCKING;
  }
}
