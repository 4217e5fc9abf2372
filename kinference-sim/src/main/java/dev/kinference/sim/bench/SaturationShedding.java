package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The admission control of the Gateway API Inference Extension's EPP v0.5 in front of another router, as in llm-d's
 * published precise-prefix benchmark (its scheduler, llm-d-inference-scheduler v0.2, is built on that EPP). A request
 * whose model has no InferenceModel is Sheddable there, and a Sheddable request is turned away with HTTP 429 when no
 * server has capacity: when every server's waiting queue is above 5 or its KV usage above 0.8, or its metrics are
 * older than 200 ms ({@code pkg/epp/requestcontrol/director.go}, {@code admitRequest};
 * {@code pkg/epp/saturationdetector}, its defaults). Otherwise the wrapped router decides. The EPP judges the metrics
 * it last scraped, so this judges those the fleet delivered, aged from their delivery. From EPP v1.0 on such
 * requests have priority 0 and are never shed.
 *
 * <p>Called on the fleet's thread, as every {@link FleetRouter}; not thread-safe.
 */
final class SaturationShedding implements FleetRouter {

  /** A server with more requests waiting has no capacity ({@code DefaultQueueThresholdCritical}). */
  static final int QUEUE_DEPTH_THRESHOLD = 5;
  /** A server with more KV in use has no capacity ({@code DefaultKVCacheThreshold}). */
  static final double KV_CACHE_UTIL_THRESHOLD = 0.8;
  /** Metrics older than this say nothing, and their server counts as without capacity. */
  static final long METRICS_STALENESS_NANOS = 200_000_000L;

  private static final Decision TURNED_AWAY = () -> FleetRouter.REJECTED;

  private final FleetRouter inner;
  private final String name;
  private @Nullable EngineMetrics[] seen = new EngineMetrics[0];
  private long[] deliveredAt = new long[0];
  private long turnedAway;

  SaturationShedding(FleetRouter inner) {
    this.inner = Objects.requireNonNull(inner, "inner");
    this.name = inner.name() + Routers.SHEDDING_SUFFIX;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void start(FleetView fleet) {
    seen = new EngineMetrics[fleet.size()];
    deliveredAt = new long[fleet.size()];
    Arrays.fill(deliveredAt, Long.MIN_VALUE);
    inner.start(fleet);
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    if (saturated(nowNanos)) {
      turnedAway++;
      return TURNED_AWAY;
    }
    return inner.route(request, nowNanos);
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    seen[server] = metrics;
    deliveredAt[server] = nowNanos;
    inner.onMetrics(server, metrics, takenAtNanos, nowNanos);
  }

  @Override
  public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
    inner.onKvEvents(server, batch, nowNanos);
  }

  /** Whether no server has capacity at {@code nowNanos}, by the EPP's rule. */
  boolean saturated(long nowNanos) {
    for (int i = 0; i < seen.length; i++) {
      EngineMetrics m = seen[i];
      if (m == null || nowNanos - deliveredAt[i] > METRICS_STALENESS_NANOS) {
        continue;
      }
      if (m.waiting() > QUEUE_DEPTH_THRESHOLD || m.kvCacheUsage() > KV_CACHE_UTIL_THRESHOLD) {
        continue;
      }
      return false;
    }
    return true;
  }

  /** Requests turned away so far. */
  long turnedAway() {
    return turnedAway;
  }
}
