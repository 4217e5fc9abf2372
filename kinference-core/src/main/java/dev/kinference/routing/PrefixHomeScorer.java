package dev.kinference.routing;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.FleetListener;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Once every candidate is saturated ({@link RoutingContext#saturation()}), sends a long prompt that no candidate
 * holds any of back where the router last sent it, as SGLang's cache-aware router sends every prompt. A prompt is
 * long on an endpoint when its blocks are at least {@code minCacheShare} of that endpoint's KV cache
 * ({@code num_gpu_blocks} as scraped; never on an endpoint not yet scraped). For such a prompt an endpoint scores the
 * fraction of the prompt's blocks it was sent, as an {@link ApproximateCacheIndex} of the router's own decisions
 * remembers them (for two minutes after a prefix was last sent there); everything else scores 0. The history is
 * looked up with the first candidate's block size: in a fleet of mixed block sizes, endpoints of another size score
 * 0.
 *
 * <p>Why: placed by load, a prompt its servers evicted lands anywhere, and over time each group of prompts sharing
 * a long prefix spreads over every server. Past saturation a server then runs requests of many groups at once,
 * needs more distinct prefixes than its cache holds, and runs out of KV memory: with 18,000-token system prompts
 * at 64 clients the fleet's goodput fell to a tenth of its peak (docs/BENCHMARKS.md). Below saturation spreading
 * costs little and balances load, and the same score applied there cost the tenant mix 2-4% of its goodput. It is
 * for routers with a precise cache index: an approximate index already remembers where prompts were sent, and the
 * default profile leaves it out there.
 *
 * <p>A {@link FleetListener}: the router registers it with its fleet, and an instance serves one router (its history
 * is kept by that fleet's endpoint slots). Thread-safe: {@link #score} and {@link #onRouted} may run concurrently;
 * in the steady state neither allocates, and {@link #onRouted} records long prompts only.
 */
public final class PrefixHomeScorer implements Scorer, FleetListener {

  /** {@code minCacheShare}: the share of an endpoint's KV cache from which a prompt counts as long. */
  static final Parameter MIN_CACHE_SHARE = Parameter.number("minCacheShare", 0.02, 0, false, 1, true,
      "the share of an endpoint's KV cache from which a prompt counts as long");

  /** The default share of an endpoint's KV cache from which a prompt counts as long: a fiftieth. */
  public static final double DEFAULT_MIN_CACHE_SHARE = (Double) MIN_CACHE_SHARE.defaultValue();

  /** The history's match per candidate, per thread: the context's own array holds the cache index's. */
  private static final ThreadLocal<int[]> MATCHED = ThreadLocal.withInitial(() -> new int[16]);

  private final double minCacheShare;
  private final ApproximateCacheIndex history;

  /** Public for {@link java.util.ServiceLoader}: the default share, on the system clock. */
  public PrefixHomeScorer() {
    this(DEFAULT_MIN_CACHE_SHARE, System::nanoTime);
  }

  /**
   * @param minCacheShare the share of an endpoint's KV cache, in (0, 1], from which a prompt counts as long
   * @param ticker the clock the history ages by (the router's)
   */
  public PrefixHomeScorer(double minCacheShare, LongSupplier ticker) {
    this.minCacheShare = Parameters.of(List.of(MIN_CACHE_SHARE), Map.of(MIN_CACHE_SHARE.name(), minCacheShare))
        .number(MIN_CACHE_SHARE.name());
    this.history = ApproximateCacheIndex.builder().ticker(ticker).build();
  }

  @Override
  public String name() {
    return "prefix-home";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(MIN_CACHE_SHARE);
  }

  /** A new instance with its own history, on the router's clock. */
  @Override
  public Scorer create(Parameters parameters, LongSupplier ticker) {
    return new PrefixHomeScorer(parameters.number(MIN_CACHE_SHARE.name()), ticker);
  }

  @Override
  public Parameters parameters() {
    return Parameters.of(declaredParameters(), Map.of(MIN_CACHE_SHARE.name(), minCacheShare));
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    Arrays.fill(scores, 0, n, 0.0);
    if (!context.everyCandidateSaturated()) {
      return;
    }
    boolean anyLong = false;
    for (int i = 0; i < n; i++) {
      if (context.matchedBlocks(i) > 0) {
        return;
      }
      anyLong |= isLong(context, i);
    }
    if (!anyLong) {
      return;
    }
    int[] matched = MATCHED.get();
    if (matched.length < n) {
      matched = new int[Math.max(n, matched.length * 2)];
      MATCHED.set(matched);
    }
    history.lookup(context.prompt().keys(context.blockSize(0)), context.candidateArray(), n, matched);
    for (int i = 0; i < n; i++) {
      int blocks = context.promptBlocks(i);
      if (blocks > 0 && isLong(context, i)) {
        scores[i] = Math.min(1.0, (double) matched[i] / blocks);
      }
    }
  }

  @Override
  public void onRouted(RoutingContext context, int chosen) {
    if (isLong(context, chosen)) {
      history.onRouted(context.candidate(chosen), context.prompt().keys(context.blockSize(chosen)));
    }
  }

  @Override
  public void onEndpointAdded(EndpointState endpoint) {
    history.onEndpointAdded(endpoint);
  }

  @Override
  public void onEndpointRemoved(EndpointState endpoint) {
    history.onEndpointRemoved(endpoint);
  }

  private boolean isLong(RoutingContext context, int i) {
    return isLong(context, i, minCacheShare);
  }

  /**
   * Whether the prompt's blocks are at least {@code minCacheShare} of candidate i's KV cache ({@code num_gpu_blocks}
   * as scraped); never on a candidate not yet scraped. Shared with {@link NewPrefixHeadroomScorer}, which counts a
   * prompt long the same way.
   */
  static boolean isLong(RoutingContext context, int i, double minCacheShare) {
    EndpointMetrics m = context.candidate(i).metrics();
    return m != null && m.numGpuBlocks() > 0 && context.promptBlocks(i) >= minCacheShare * m.numGpuBlocks();
  }
}
