package dev.kinference.vllm.kvevents;

import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.vllm.VllmLabels;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * One {@link KvEventSubscriber} per member of a {@link Fleet}: started when an endpoint joins, stopped when it
 * leaves. Where to subscribe comes from the endpoint's labels ({@link VllmLabels#KV_EVENTS},
 * {@link VllmLabels#KV_EVENTS_REPLAY}, {@link VllmLabels#KV_EVENTS_TOPIC}, {@link VllmLabels#DATA_PARALLEL_RANK});
 * an endpoint without a {@code kv-events} label is subscribed at {@code tcp://<its host>:<default port>} if a
 * default port is set, and not at all otherwise. External endpoints are never subscribed.
 *
 * <p>For hybrid-attention models (full attention beside sliding-window or Mamba layers), give the router and this
 * class the same {@link HybridCacheIndex}: each subscriber then tells it how far each endpoint's other KV-cache groups
 * let a prefix hit reach.
 *
 * <p>Attach the cache index to the fleet before this listener, so that the index knows an endpoint before its
 * first event arrives ({@link #attach} checks nothing of the kind; {@code Router} does it in that order).
 *
 * <p>Thread-safe. Subscribers share one ZeroMQ context, closed by {@link #close}.
 */
public final class KvEventSubscriptions implements FleetListener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventSubscriptions.class);

  private final CacheIndex index;
  private final int defaultPort;
  private final Consumer<KvEventSubscriber.Builder> customizer;
  private final ZContext context = new ZContext(1);
  private final Map<String, KvEventSubscriber> byId = new ConcurrentHashMap<>();
  // Subscribers replaced or removed: told to stop (under the fleet's lock, so not waited for there) and joined by
  // close(), before the context their sockets belong to is closed.
  private final Set<KvEventSubscriber> retired = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private KvEventSubscriptions(CacheIndex index, int defaultPort, Consumer<KvEventSubscriber.Builder> customizer) {
    this.index = index;
    this.defaultPort = defaultPort;
    this.customizer = customizer;
    context.setLinger(0);
  }

  /** Subscriptions applying events to {@code index}, with no default port and default subscriber settings. */
  public static KvEventSubscriptions create(CacheIndex index) {
    return new KvEventSubscriptions(Objects.requireNonNull(index, "index"), 0, b -> {});
  }

  /**
   * Subscriptions applying events to {@code index}.
   *
   * @param defaultPort the publisher port for endpoints without a {@code kv-events} label (vLLM's default is
   *     5557), or 0 to subscribe only labelled endpoints
   * @param customizer adjusts each subscriber's builder (timeouts, listener) before it is built
   */
  public static KvEventSubscriptions create(CacheIndex index, int defaultPort,
      Consumer<KvEventSubscriber.Builder> customizer) {
    if (defaultPort < 0 || defaultPort > 65535) {
      throw new IllegalArgumentException("defaultPort out of range: " + defaultPort);
    }
    return new KvEventSubscriptions(Objects.requireNonNull(index, "index"), defaultPort,
        Objects.requireNonNull(customizer, "customizer"));
  }

  /** Registers with {@code fleet}: current members are subscribed at once. Returns this. */
  public KvEventSubscriptions attach(Fleet fleet) {
    fleet.addListener(this);
    return this;
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    if (closed) {
      return;
    }
    Endpoint e = endpoint.endpoint();
    if (e.isExternal()) {
      return;
    }
    String address = VllmLabels.nonBlank(e, VllmLabels.KV_EVENTS);
    if (address == null && defaultPort > 0 && e.uri().getHost() != null) {
      address = "tcp://" + e.uri().getHost() + ":" + defaultPort;
    }
    if (address == null) {
      return;
    }
    try {
      KvEventSubscriber.Builder b = KvEventSubscriber.builder(endpoint, index)
          .address(address)
          .replayAddress(VllmLabels.nonBlank(e, VllmLabels.KV_EVENTS_REPLAY))
          .context(context);
      String topic = e.label(VllmLabels.KV_EVENTS_TOPIC);
      if (topic != null) {
        b.topic(topic);
      }
      int rank = VllmLabels.dataParallelRank(e);
      if (rank >= 0) {
        b.dataParallelRank(rank);
      }
      customizer.accept(b);
      KvEventSubscriber subscriber = b.build();
      KvEventSubscriber previous = byId.put(e.id(), subscriber);
      if (previous != null) {
        retire(previous);
      }
      subscriber.start();
    } catch (IllegalArgumentException ex) {
      LOG.warn("cannot subscribe to the KV events of {}: {}", e.id(), ex.getMessage());
    }
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    KvEventSubscriber s = byId.get(endpoint.id());
    if (s != null && s.endpoint() == endpoint) {
      byId.remove(endpoint.id(), s);
      retire(s);
    }
  }

  private void retire(KvEventSubscriber s) {
    s.stop();
    retired.removeIf(r -> !r.isThreadAlive());
    retired.add(s);
  }

  /** The subscriber of the endpoint with this id, or null. */
  public @Nullable KvEventSubscriber subscriber(String endpointId) {
    return byId.get(endpointId);
  }

  /** Every subscriber's statistics, by endpoint id. */
  public Map<String, KvEventSubscriber.Stats> stats() {
    Map<String, KvEventSubscriber.Stats> out = new TreeMap<>();
    byId.forEach((id, s) -> out.put(id, s.stats()));
    return out;
  }

  /** Stops every subscriber, the retired ones included, waits for their threads and releases the ZeroMQ context. */
  @Override
  public void close() {
    closed = true;
    for (KvEventSubscriber s : byId.values()) {
      s.stop();
    }
    for (KvEventSubscriber s : byId.values()) {
      s.close();
    }
    for (KvEventSubscriber s : retired) {
      s.close();
    }
    byId.clear();
    retired.clear();
    context.close();
  }
}
