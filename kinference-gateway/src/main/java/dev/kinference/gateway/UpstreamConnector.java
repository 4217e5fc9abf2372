package dev.kinference.gateway;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Map;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.jspecify.annotations.Nullable;

/**
 * The connector of the HTTP client to local servers: its connections are carried by the gateway server's own I/O
 * threads ({@link GatewayConnector}), and their reads run on the I/O thread that saw the bytes arrive.
 *
 * <p>Why one set of I/O threads: with the upstream client's own selector threads, every proxied exchange woke a third
 * thread (the server's reader, the client's reader for the answer, the server's again to wait for the next request).
 * On a core shared by both, an event loop that reads the request, writes it upstream and reads the answer is one
 * thread, as in an event-loop proxy (docs/PERFORMANCE.md, "One event loop for both sides"). Why inline reads: Jetty
 * hands a read it is not told is non-blocking to another thread; the gateway's response handling never waits (writes
 * to the client are asynchronous, and the upstream is read only as the client takes the bytes), so that hand-off on
 * every response was pure cost.
 *
 * <p>Configure before starting; thread-safe once started.
 */
final class UpstreamConnector extends ClientConnector {

  private final SelectorManager carrier;

  /** @param carrier the gateway server's selector manager, which carries the connections */
  UpstreamConnector(SelectorManager carrier) {
    this.carrier = carrier;
  }

  @Override
  protected SelectorManager newSelectorManager() {
    return new Forwarding(carrier);
  }

  @Override
  protected EndPoint newEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
    return new UpstreamEndPoint((SocketChannel) channel, selector, key, this);
  }

  // The carrier's selector manager completes a connection's life through these, as the connector's own would.

  UpstreamEndPoint carriedEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
    UpstreamEndPoint endPoint = new UpstreamEndPoint((SocketChannel) channel, selector, key, this);
    endPoint.setIdleTimeout(getIdleTimeout().toMillis());
    return endPoint;
  }

  Connection carriedConnection(EndPoint endPoint, Map<String, Object> context) throws IOException {
    return newConnection(endPoint, context);
  }

  /** Completes the connect's promise; call after the connection is opened. */
  static void carriedOpened(Connection connection, Map<String, Object> context) {
    @SuppressWarnings("unchecked")
    Promise<Connection> promise = (Promise<Connection>) context.get(CONNECTION_PROMISE_CONTEXT_KEY);
    if (promise != null) {
      promise.succeeded(connection);
    }
  }

  static void carriedOpenFailed(Throwable failure, Map<String, Object> context) {
    Promise<?> promise = (Promise<?>) context.get(CONNECTION_PROMISE_CONTEXT_KEY);
    if (promise != null) {
      promise.failed(failure);
    }
  }

  void carriedConnectFailed(SelectableChannel channel, Throwable failure, Map<String, Object> context) {
    connectFailed(channel, (SocketAddress) context.get(REMOTE_SOCKET_ADDRESS_CONTEXT_KEY), failure, context);
  }

  void carriedAcceptFailed(SelectableChannel channel, Throwable failure, Map<String, Object> context) {
    acceptFailed(failure, channel, context);
  }

  /** The connector of a carried connection's context, or null when the context is not one of ours. */
  static @Nullable UpstreamConnector of(@Nullable Object attachment) {
    return attachment instanceof Map<?, ?> context && context.get(CONTEXT_KEY) instanceof UpstreamConnector c
        ? c : null;
  }

  /**
   * Registers new connections with the carrier instead of selector threads of its own; it has none, so starting and
   * stopping it does nothing (the server's connector owns the threads).
   */
  private static final class Forwarding extends SelectorManager {
    private final SelectorManager carrier;

    Forwarding(SelectorManager carrier) {
      super(carrier.getExecutor(), carrier.getScheduler(), 1);
      this.carrier = carrier;
    }

    @Override
    public void connect(SelectableChannel channel, Object attachment) {
      carrier.connect(channel, attachment);
    }

    @Override
    public void accept(SelectableChannel channel, Object attachment) {
      carrier.accept(channel, attachment);
    }

    @Override
    protected void doStart() {
      // no selector threads of its own
    }

    @Override
    protected void doStop() {
      // the carrier closes the connections it carries when the server stops
    }

    @Override
    protected EndPoint newEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
      throw new IllegalStateException("connections are registered with the carrier");
    }

    @Override
    public Connection newConnection(SelectableChannel channel, EndPoint endPoint, Object attachment) {
      throw new IllegalStateException("connections are registered with the carrier");
    }
  }

  /** A connection to a local server, whose reads are declared non-blocking. */
  static final class UpstreamEndPoint extends SocketChannelEndPoint {
    UpstreamEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, UpstreamConnector connector) {
      super(channel, selector, key, connector.getScheduler());
    }

    @Override
    public void fillInterested(Callback callback) {
      super.fillInterested(nonBlocking(callback));
    }

    @Override
    public boolean tryFillInterested(Callback callback) {
      return super.tryFillInterested(nonBlocking(callback));
    }

    private static Callback nonBlocking(Callback read) {
      return new Callback() {
        @Override
        public void succeeded() {
          read.succeeded();
        }

        @Override
        public void failed(Throwable x) {
          read.failed(x);
        }

        @Override
        public InvocationType getInvocationType() {
          return InvocationType.NON_BLOCKING;
        }
      };
    }
  }
}
