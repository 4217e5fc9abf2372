package dev.kinference.endpoint;

import dev.kinference.plugin.Plugin;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where endpoints come from: a static list, Kubernetes EndpointSlices, a file. A source delivers the complete
 * current set on every change (never a delta), so a listener that misses one update still converges.
 *
 * <p>Implementations must be thread-safe; the listener may be called from the source's own thread.
 */
public interface EndpointSource extends Plugin, AutoCloseable {

  /**
   * Starts delivering: {@code listener} receives the current set as soon as it is known, then every later set.
   * Calling {@code start} twice is an error.
   */
  void start(Consumer<List<Endpoint>> listener);

  /** Stops delivering and releases resources (watches, threads). Idempotent. */
  @Override
  void close();
}
