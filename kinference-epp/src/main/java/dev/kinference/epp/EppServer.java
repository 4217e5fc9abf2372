package dev.kinference.epp;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The endpoint picker's gRPC server: the ext_proc service ({@link EndpointPicker}) and the gRPC health service with
 * the services the protocol names ({@code liveness}, {@code readiness}, {@code
 * envoy.service.ext_proc.v3.ExternalProcessor}, and the server as a whole, {@code ""}). Close it to stop serving;
 * what the picker routes with is its owner's to close.
 */
public final class EppServer implements AutoCloseable {

  /** The ext_proc service's name, as health checks ask for it. */
  public static final String EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

  private final Server server;
  private final HealthStatusManager healthManager;

  /** Starts serving {@code picker} on {@code host:port} (port 0: a free one), on gRPC's default executor. */
  public static EppServer start(EndpointPicker picker, String host, int port) {
    return start(picker, host, port, false);
  }

  /**
   * Starts serving {@code picker} on {@code host:port} (port 0: a free one). With {@code direct}, each message is
   * handled on the transport's event-loop thread, without a hand-off: lower latency, for a picker whose decisions
   * never wait (an in-memory state store, a local tokenizer); a shared state store's round trips need the default.
   */
  public static EppServer start(EndpointPicker picker, String host, int port, boolean direct) {
    Objects.requireNonNull(picker, "picker");
    HealthStatusManager h = new HealthStatusManager();
    NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(host, port));
    if (direct) {
      b.directExecutor();
    }
    Server s = b
        .addService(picker)
        .addService(h.getHealthService())
        .build();
    try {
      s.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve the endpoint picker on " + host + ":" + port, e);
    }
    EppServer server = new EppServer(s, h);
    server.serving(true);
    return server;
  }

  private EppServer(Server server, HealthStatusManager health) {
    this.server = server;
    this.healthManager = health;
  }

  /** Readiness: whether the picker takes requests (liveness stays serving while the process runs). */
  public void serving(boolean ready) {
    ServingStatus status = ready ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    healthManager.setStatus("liveness", ServingStatus.SERVING);
    healthManager.setStatus("readiness", status);
    healthManager.setStatus(EXT_PROC_SERVICE, status);
    healthManager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
  }

  /** The port served. */
  public int port() {
    return server.getPort();
  }

  /** Blocks until the server stops. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  @Override
  public void close() {
    healthManager.enterTerminalState();
    server.shutdown();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
