package dev.kinference.gateway;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The gateway server's thread pool: a {@link QueuedThreadPool}, except that an HTTP/1.1 connection handed over to be
 * resumed runs on the thread handing it over.
 *
 * <p>Why: when a response completes outside the connection's own read (for the gateway, nearly always: the
 * upstream's answer is written to the client by the I/O thread that read it from the upstream connection), Jetty's
 * HTTP/1.1 connection resumes by executing itself on the connector's executor, which only reads the socket and,
 * finding no next request yet, registers for one. Through the pool that is a thread wake-up and a context switch per
 * request for microseconds of work (about a tenth of the gateway's CPU under load: docs/PERFORMANCE.md, "One I/O
 * thread per request"). Running it on the completing thread (the I/O thread that read the answer, or whichever
 * thread ended the exchange: a timeout on the ticker, an external provider's executor) is safe because the gateway's
 * handler does not hold the thread it runs on for long: large bodies, token counting, the metrics page and, when
 * plugins may block ({@link Gateway.Builder#blockingPlugins}), every request go to the pool. A pipelined request the
 * connection finds is handled there as it would be on a selector thread. Every other task is queued as usual.
 * Thread-safe.
 */
final class GatewayThreadPool extends QueuedThreadPool {

  GatewayThreadPool(int maxThreads, int minThreads) {
    super(maxThreads, minThreads);
  }

  @Override
  public void execute(Runnable task) {
    // Jetty's HTTP/1.1 server connection is the only connection that is also its request's metadata and runnable.
    if (task instanceof Connection && task instanceof ConnectionMetaData) {
      task.run();
    } else {
      super.execute(task);
    }
  }
}
