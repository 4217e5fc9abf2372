package dev.kinference.k8s;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback that can cut every open connection at once: a real dropped connection (RST/FIN in the
 * middle of a watch), which no HTTP mock can produce by itself.
 */
final class DropProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final int targetPort;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean closed;

  DropProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().name("drop-proxy-accept").start(this::acceptLoop);
  }

  int port() {
    return listener.getLocalPort();
  }

  /** Connections accepted so far. */
  int accepted() {
    return accepted.get();
  }

  /**
   * Makes every open connection go silent, as a connection does when a NAT or a node drops it without a reset:
   * nothing more is forwarded either way, and nothing is closed. New connections work normally.
   */
  void silenceAll() {
    silenced.addAll(open);
  }

  private final java.util.Set<Socket> silenced = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Closes every open connection, both sides. */
  void dropAll() {
    for (Socket s : open) {
      try {
        s.close();
      } catch (IOException ignored) {
        // already closed
      }
    }
    open.clear();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        accepted.incrementAndGet();
        Socket server = new Socket();
        server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5_000);
        open.add(client);
        open.add(server);
        Thread.ofVirtual().start(() -> pipe(client, server));
        Thread.ofVirtual().start(() -> pipe(server, client));
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    byte[] buf = new byte[8192];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        if (silenced.contains(from) || silenced.contains(to)) {
          continue; // swallowed
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException ignored) {
      // dropped
    } finally {
      try {
        from.close();
        to.close();
      } catch (IOException ignored) {
        // already closed
      }
      open.remove(from);
      open.remove(to);
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
    dropAll();
  }
}
