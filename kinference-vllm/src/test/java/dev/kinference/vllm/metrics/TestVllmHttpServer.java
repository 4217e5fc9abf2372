package dev.kinference.vllm.metrics;

import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/** A loopback HTTP server with vLLM's /metrics and /health; stoppable and restartable on the same port. */
final class TestVllmHttpServer implements AutoCloseable {

  volatile String metrics = "";
  volatile int healthStatus = 200;
  final AtomicInteger metricsRequests = new AtomicInteger();
  final AtomicInteger healthRequests = new AtomicInteger();
  final AtomicInteger connectionsOpened = new AtomicInteger();
  private Server server;
  private final int port;

  TestVllmHttpServer() throws Exception {
    server = start(0);
    port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  String uri() {
    return "http://127.0.0.1:" + port;
  }

  void stop() throws Exception {
    server.stop();
  }

  void restart() throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        server = start(port);
        return;
      } catch (java.io.IOException e) {
        if (attempt > 100) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
  }

  private Server start(int p) throws Exception {
    Server s = new Server();
    ServerConnector connector = new ServerConnector(s);
    connector.setHost("127.0.0.1");
    connector.setPort(p);
    connector.addEventListener(new Connection.Listener() {
      @Override
      public void onOpened(Connection connection) {
        connectionsOpened.incrementAndGet();
      }
    });
    s.addConnector(connector);
    s.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        int status;
        String body;
        if (path.equals("/metrics")) {
          metricsRequests.incrementAndGet();
          status = 200;
          body = metrics;
        } else if (path.equals("/health")) {
          healthRequests.incrementAndGet();
          status = healthStatus;
          body = "";
        } else {
          status = 404;
          body = "";
        }
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
        Content.Sink.write(response, true, body, callback);
        return true;
      }
    });
    try {
      s.start();
    } catch (Exception e) {
      s.stop();
      throw e;
    }
    return s;
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
