package dev.kinference.endpoint;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** A fixed list of endpoints, delivered once on {@link #start}. Immutable and thread-safe. */
public final class StaticEndpointSource implements EndpointSource {

  private final List<Endpoint> endpoints;
  private final AtomicBoolean started = new AtomicBoolean();

  private StaticEndpointSource(List<Endpoint> endpoints) {
    this.endpoints = List.copyOf(endpoints);
    Set<String> ids = new HashSet<>();
    for (Endpoint e : this.endpoints) {
      if (!ids.add(e.id())) {
        throw new IllegalArgumentException("duplicate endpoint id: " + e.id());
      }
    }
  }

  /** A source of these endpoints; ids must be unique. */
  public static StaticEndpointSource of(List<Endpoint> endpoints) {
    return new StaticEndpointSource(endpoints);
  }

  public static StaticEndpointSource of(Endpoint... endpoints) {
    return new StaticEndpointSource(List.of(endpoints));
  }

  public List<Endpoint> endpoints() {
    return endpoints;
  }

  @Override
  public String name() {
    return "static";
  }

  @Override
  public void start(Consumer<List<Endpoint>> listener) {
    Objects.requireNonNull(listener, "listener");
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("already started");
    }
    listener.accept(endpoints);
  }

  @Override
  public void close() {}
}
