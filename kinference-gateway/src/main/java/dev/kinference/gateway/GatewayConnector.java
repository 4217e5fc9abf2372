package dev.kinference.gateway;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.util.concurrent.Executor;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The gateway's server connector, whose I/O threads also carry the connections of the client to local servers
 * ({@link UpstreamConnector}): a connection's context says which side it belongs to, and an upstream one is created,
 * opened and failed as the client's own selector manager would (its listeners aside: see {@link UpstreamConnector}).
 * Thread-safe.
 */
final class GatewayConnector extends ServerConnector {

  GatewayConnector(Server server, int ioThreads, ConnectionFactory... factories) {
    super(server, -1, ioThreads, factories);
  }

  @Override
  protected SelectorManager newSelectorManager(Executor executor, Scheduler scheduler, int selectors) {
    return new CarryingManager(executor, scheduler, selectors);
  }

  private final class CarryingManager extends ServerConnectorManager {

    CarryingManager(Executor executor, Scheduler scheduler, int selectors) {
      super(executor, scheduler, selectors);
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key)
        throws IOException {
      UpstreamConnector upstream = UpstreamConnector.of(key.attachment());
      return upstream != null ? upstream.carriedEndPoint(channel, selector, key)
          : super.newEndPoint(channel, selector, key);
    }

    @Override
    public Connection newConnection(SelectableChannel channel, EndPoint endPoint, Object attachment)
        throws IOException {
      UpstreamConnector upstream = UpstreamConnector.of(attachment);
      return upstream != null ? upstream.carriedConnection(endPoint, attachment)
          : super.newConnection(channel, endPoint, attachment);
    }

    @Override
    public void connectionOpened(Connection connection, Object context) {
      UpstreamConnector upstream = UpstreamConnector.of(context);
      if (upstream != null) {
        upstream.carriedOpened(connection, context, () -> super.connectionOpened(connection, context));
      } else {
        super.connectionOpened(connection, context);
      }
    }

    @Override
    protected void connectionFailed(SelectableChannel channel, Throwable failure, Object attachment) {
      super.connectionFailed(channel, failure, attachment);
      UpstreamConnector upstream = UpstreamConnector.of(attachment);
      if (upstream != null) {
        upstream.carriedConnectFailed(channel, failure, attachment);
      }
    }

    @Override
    protected void onAcceptFailed(SelectableChannel channel, Throwable failure, Object attachment) {
      super.onAcceptFailed(channel, failure, attachment);
      UpstreamConnector upstream = UpstreamConnector.of(attachment);
      if (upstream != null) {
        upstream.carriedAcceptFailed(channel, failure, attachment);
      }
    }

    // The server's own bookkeeping (open connections, graceful shutdown) is for its clients' connections only.

    @Override
    protected void endPointOpened(EndPoint endPoint) {
      if (!(endPoint instanceof UpstreamConnector.UpstreamEndPoint)) {
        super.endPointOpened(endPoint);
      }
    }

    @Override
    protected void endPointClosed(EndPoint endPoint) {
      if (!(endPoint instanceof UpstreamConnector.UpstreamEndPoint)) {
        super.endPointClosed(endPoint);
      }
    }
  }
}
