package dev.kinference.sim.server;

import dev.kinference.endpoint.Endpoint;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Several {@link SimulatedServer}s of one model on loopback, each on its own ephemeral ports: what a test or a demo
 * routes over.
 *
 * <pre>{@code
 * try (SimulatedFleet fleet = SimulatedFleet.builder("Qwen/Qwen3-8B").servers(3).build()) {
 *   Router router = Router.builder().endpoints(fleet.endpoints()).build();
 * }
 * }</pre>
 *
 * <p>Thread-safe and immutable once built (the servers themselves are thread-safe). Closing the fleet closes every
 * server.
 */
public final class SimulatedFleet implements AutoCloseable {

  private final List<SimulatedServer> servers;

  private SimulatedFleet(List<SimulatedServer> servers) {
    this.servers = List.copyOf(servers);
  }

  /** A builder for a fleet serving {@code modelName}. */
  public static Builder builder(String modelName) {
    return new Builder(modelName);
  }

  /** The servers, in the order they were started. */
  public List<SimulatedServer> servers() {
    return servers;
  }

  public SimulatedServer server(int index) {
    return servers.get(index);
  }

  public int size() {
    return servers.size();
  }

  /** Each server's {@code http://127.0.0.1:<port>}. */
  public List<URI> baseUris() {
    return servers.stream().map(SimulatedServer::baseUri).toList();
  }

  /** Each server's KV-event PUB address, or null where events are disabled. */
  public List<String> kvEventsEndpoints() {
    List<String> out = new ArrayList<>(servers.size());
    for (SimulatedServer s : servers) {
      out.add(Objects.requireNonNullElse(s.kvEventsEndpoint(), ""));
    }
    return out;
  }

  /** Each server as a router endpoint, labelled with its KV-event addresses. */
  public List<Endpoint> endpoints() {
    return servers.stream().map(SimulatedServer::endpoint).toList();
  }

  @Override
  public void close() {
    RuntimeException first = null;
    for (SimulatedServer s : servers) {
      try {
        s.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public String toString() {
    return "SimulatedFleet" + servers.stream().map(SimulatedServer::name).toList();
  }

  /** Configures a {@link SimulatedFleet}. Not thread-safe. */
  public static final class Builder {
    private final String modelName;
    private int count = 3;
    private String namePrefix = "vllm-";
    private BiConsumer<Integer, SimulatedServerBuilder> settings = (i, b) -> {};

    private Builder(String modelName) {
      Objects.requireNonNull(modelName, "modelName");
      if (modelName.isBlank()) {
        throw new IllegalArgumentException("modelName must not be blank");
      }
      this.modelName = modelName;
    }

    /** How many servers. Default 3. */
    public Builder servers(int count) {
      if (count < 1 || count > 256) {
        throw new IllegalArgumentException("servers must be in [1, 256]: " + count);
      }
      this.count = count;
      return this;
    }

    /** Servers are named {@code prefix + index}. Default {@code vllm-}. */
    public Builder namePrefix(String prefix) {
      this.namePrefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /** Applies the same settings to every server's builder. */
    public Builder eachServer(java.util.function.Consumer<SimulatedServerBuilder> each) {
      Objects.requireNonNull(each, "each");
      this.settings = (i, b) -> each.accept(b);
      return this;
    }

    /** Applies settings to each server's builder, given its index (for heterogeneous fleets). */
    public Builder eachServer(BiConsumer<Integer, SimulatedServerBuilder> each) {
      this.settings = Objects.requireNonNull(each, "each");
      return this;
    }

    /** Starts every server; if one fails, those already started are closed. */
    public SimulatedFleet build() {
      List<SimulatedServer> started = new ArrayList<>(count);
      try {
        for (int i = 0; i < count; i++) {
          SimulatedServerBuilder b = SimulatedServer.builder(modelName).name(namePrefix + i);
          settings.accept(i, b);
          started.add(b.start());
        }
      } catch (RuntimeException e) {
        for (SimulatedServer s : started) {
          try {
            s.close();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
          }
        }
        throw e;
      }
      return new SimulatedFleet(started);
    }
  }
}
