package dev.kinference.sim.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on 127.0.0.1 that accepts its first connection and never reads from or writes to it, then forwards
 * every later connection to {@code targetPort}. It reproduces, on demand, the fresh ZeroMQ connection that JeroMQ 0.6
 * occasionally leaves silent, so a test can check what a client does once its handshake limit expires.
 */
final class SilentFirstConnectionRelay implements AutoCloseable {

  private final ServerSocket listener;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  SilentFirstConnectionRelay(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    this.acceptor = Thread.ofPlatform().daemon().name("silent-relay").start(this::accept);
  }

  String endpoint() {
    return "tcp://127.0.0.1:" + listener.getLocalPort();
  }

  private void accept() {
    boolean first = true;
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        sockets.add(client);
        if (first) {
          first = false;
          continue; // held open, never served
        }
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private static void pump(Socket from, Socket to) {
    Thread.ofPlatform().daemon().name("silent-relay-pump").start(() -> {
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        in.transferTo(out);
      } catch (IOException e) {
        // one side closed: the other is closed below
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    });
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    sockets.forEach(SilentFirstConnectionRelay::closeQuietly);
    try {
      acceptor.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
