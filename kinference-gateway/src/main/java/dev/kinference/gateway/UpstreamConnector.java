package dev.kinference.gateway;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.Objects;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The connector of the HTTP client to local servers: its connections are carried by the gateway server's own I/O
 * threads ({@link GatewayConnector}), and, unless plugins may block, their reads run on the I/O thread that saw the
 * bytes arrive.
 *
 * <p>Why one set of I/O threads: with the upstream client's own selector threads, every proxied exchange woke a third
 * thread (the server's reader, the client's reader for the answer, the server's again to wait for the next request).
 * On a core shared by both, an event loop that reads the request, writes it upstream and reads the answer is one
 * thread, as in an event-loop proxy (docs/PERFORMANCE.md, "One event loop for both sides"). Why inline reads: Jetty
 * hands a read it is not told is non-blocking to another thread; the gateway's response handling never waits (writes
 * to the client are asynchronous, and the upstream is read only as the client takes the bytes), so that hand-off on
 * every response was pure cost. When plugins may block ({@link Gateway.Builder#blockingPlugins}), the end of an
 * exchange (settling a reservation with a rate-limit store, routing a queued request, a retry's routing) must not
 * run on an I/O thread either, so the reads are then left to Jetty to hand to the pool.
 *
 * <p>Jetty's {@code ConnectListener}s are not told of a connect completed by the carrier (nothing registers one), and
 * the carrier's accept listeners would see a connect that completed at once (the gateway installs none). Configure
 * before starting; thread-safe once started.
 */
final class UpstreamConnector extends ClientConnector {

  private final SelectorManager carrier;
  private final boolean readsMayBlock;

  /**
   * @param carrier the gateway server's selector manager, which carries the connections
   * @param readsMayBlock whether handling an answer may block (plugins that wait on the network): its reads are then
   *     not run on the I/O thread
   */
  UpstreamConnector(SelectorManager carrier, boolean readsMayBlock) {
    this.carrier = carrier;
    this.readsMayBlock = readsMayBlock;
  }

  @Override
  protected SelectorManager newSelectorManager() {
    return new Forwarding(carrier);
  }

  // The carrier's selector manager completes a connection's life through these, as the connector's own would.

  UpstreamEndPoint carriedEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
    UpstreamEndPoint endPoint = new UpstreamEndPoint((SocketChannel) channel, selector, key, getScheduler(),
        !readsMayBlock);
    endPoint.setIdleTimeout(getIdleTimeout().toMillis());
    return endPoint;
  }

  Connection carriedConnection(EndPoint endPoint, Object attachment) throws IOException {
    return newConnection(endPoint, context(attachment));
  }

  /** Opens {@code connection} with {@code open} and completes the connect's promise with it, or with the failure. */
  void carriedOpened(Connection connection, Object attachment, Runnable open) {
    @SuppressWarnings("unchecked")
    Promise<Connection> promise = (Promise<Connection>) Objects.requireNonNull(
        context(attachment).get(CONNECTION_PROMISE_CONTEXT_KEY), "the connect's promise");
    try {
      open.run();
      promise.succeeded(connection);
    } catch (Throwable x) {
      promise.failed(x);
    }
  }

  void carriedConnectFailed(SelectableChannel channel, Throwable failure, Object attachment) {
    Map<String, Object> context = context(attachment);
    connectFailed(channel, (SocketAddress) context.get(REMOTE_SOCKET_ADDRESS_CONTEXT_KEY), failure, context);
  }

  void carriedAcceptFailed(SelectableChannel channel, Throwable failure, Object attachment) {
    acceptFailed(failure, channel, context(attachment));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> context(Object attachment) {
    return (Map<String, Object>) attachment;
  }

  /** The connector of a carried connection's context, or null when the context is not one of ours. */
  static @Nullable UpstreamConnector of(@Nullable Object attachment) {
    return attachment instanceof Map<?, ?> context && context.get(CONTEXT_KEY) instanceof UpstreamConnector c
        ? c : null;
  }

  /**
   * Registers new connections with the carrier instead of selector threads of its own; it has none, so starting and
   * stopping it does nothing (the server's connector owns the threads), and its connect timeout is the carrier's.
   */
  private static final class Forwarding extends SelectorManager {
    private final SelectorManager carrier;

    Forwarding(SelectorManager carrier) {
      // One selector slot, never filled: the constructor requires at least one.
      super(carrier.getExecutor(), carrier.getScheduler(), 1);
      this.carrier = carrier;
    }

    @Override
    public void connect(SelectableChannel channel, Object attachment) {
      requireRunningCarrier();
      carrier.connect(channel, attachment);
    }

    @Override
    public long getConnectTimeout() {
      return carrier.getConnectTimeout();
    }

    @Override
    public void setConnectTimeout(long milliseconds) {
      // Only the carrier times a connect; the server's own accepts have no connect timeout to disturb.
      carrier.setConnectTimeout(milliseconds);
    }

    @Override
    public void accept(SelectableChannel channel, Object attachment) {
      requireRunningCarrier();
      carrier.accept(channel, attachment);
    }

    /** The client reports what this throws as a failed connect. */
    private void requireRunningCarrier() {
      if (!carrier.isRunning()) {
        // Registration queued on a selector that is stopping would never complete nor time out.
        throw new IllegalStateException("the gateway is stopping: no I/O thread to carry a connection");
      }
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

  /** A connection to a local server, whose reads are declared non-blocking unless handling them may block. */
  static final class UpstreamEndPoint extends SocketChannelEndPoint {
    private final boolean inlineReads;

    UpstreamEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
        boolean inlineReads) {
      super(channel, selector, key, scheduler);
      this.inlineReads = inlineReads;
    }

    @Override
    public void fillInterested(Callback callback) {
      super.fillInterested(inlineReads ? nonBlocking(callback) : callback);
    }

    @Override
    public boolean tryFillInterested(Callback callback) {
      return super.tryFillInterested(inlineReads ? nonBlocking(callback) : callback);
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
