package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;

/**
 * SGLang model gateway's {@code cache_aware} policy with its defaults: if the load is imbalanced
 * ({@code max - min > 64} requests in flight and {@code max > 1.5 x min}) the least loaded worker; otherwise the worker
 * with the longest character prefix match in the approximate radix tree if the match covers more than 30% of the text,
 * else the worker with the smallest tree. The text is recorded under the chosen worker; every 120 s each worker's
 * share is trimmed to 2^26 characters, least recently used leaves first.
 */
final class SglangCacheAwareRouter implements FleetRouter {

  static final int BALANCE_ABS_THRESHOLD = 64;
  static final double BALANCE_REL_THRESHOLD = 1.5;
  static final double CACHE_THRESHOLD = 0.3;
  static final long MAX_TREE_CHARS = 1L << 26;
  static final long EVICTION_INTERVAL_NANOS = 120_000_000_000L;

  private LoadCounts load = new LoadCounts(0);
  private CharRadixTree tree = new CharRadixTree(0);
  private long nextEviction = EVICTION_INTERVAL_NANOS;

  @Override
  public String name() {
    return "sglang-cache-aware";
  }

  @Override
  public void start(FleetView fleet) {
    load = new LoadCounts(fleet.size());
    tree = new CharRadixTree(fleet.size());
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    if (nowNanos >= nextEviction) {
      for (int t = 0; t < load.inFlight.length; t++) {
        tree.evict(t, MAX_TREE_CHARS);
      }
      nextEviction = nowNanos + EVICTION_INTERVAL_NANOS;
    }
    int[] q = load.inFlight;
    int min = 0;
    int max = 0;
    for (int i = 1; i < q.length; i++) {
      if (q[i] < q[min]) {
        min = i;
      }
      if (q[i] > q[max]) {
        max = i;
      }
    }
    String text = request.routingText();
    int chosen;
    if (q[max] - q[min] > BALANCE_ABS_THRESHOLD && q[max] > BALANCE_REL_THRESHOLD * q[min]) {
      chosen = min;
    } else {
      CharRadixTree.Match m = tree.match(text);
      double rate = text.isEmpty() ? 0 : (double) m.matchedChars() / text.length();
      chosen = rate > CACHE_THRESHOLD && m.tenant() >= 0 ? m.tenant() : tree.smallestTenant();
    }
    tree.insert(text, chosen, nowNanos);
    return load.dispatch(chosen);
  }
}
