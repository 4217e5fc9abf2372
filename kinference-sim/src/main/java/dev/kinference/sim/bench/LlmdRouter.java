package dev.kinference.sim.bench;

import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.Objects;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * llm-d's weighted profile, what its endpoint picker runs without a configuration and its router Helm chart without a
 * values file ({@code llm-d/llm-d-router}, {@code pkg/epp/config/loader/defaults.go} and
 * {@code config/charts/routerlib/templates/_config.yaml}): weighted sum of the prefix scorer (weight 3), the queue
 * scorer (2) and the KV-cache utilisation scorer (2), maximum score wins, ties at random: the
 * {@code max-score-picker} ({@code pkg/epp/framework/plugins/scheduling/picker/maxscore/picker.go}) rotates the tied
 * endpoints by a round-robin counter ({@code picker/common.go}, {@code RotateScoredEndpoints}), but their order comes
 * from iterating a Go map of scores ({@code runPickerPlugin} in the scheduler profile), which is random on every call,
 * so the pick among ties is random. Its well-lit path now ships a different profile, {@link LlmdStickyRouter}.
 * <ul>
 *   <li>queue ({@code scorer/queuedepth/queue.go}): {@code (maxQ - q) / (maxQ - minQ)} over the servers, 1 for all
 *       when equal, q the scraped {@code vllm:num_requests_waiting};</li>
 *   <li>kv-cache-utilization ({@code scorer/kvcacheutilization/kvcache_utilization.go}): {@code 1 -
 *       vllm:kv_cache_usage_perc} as scraped;</li>
 *   <li>prefix ({@code scorer/prefix/plugin.go}, {@code matchLengthWeight} 0): leading blocks held / blocks;
 *       approximate: from the {@code approx-prefix-cache-producer}'s index of routing decisions
 *       ({@link LlmdApproxPrefixIndex}: 64-token blocks, an LRU of {@code num_gpu_blocks} hashes per server); until
 *       2026-12-01 this model hashed 64-character blocks, at most 256, into an LRU of 31,250, as the Gateway API
 *       Inference Extension's first prefix plugin did;</li>
 *   <li>prefix, precise: the same score from an index built from the servers' KV events, over the engine's 16-token
 *       blocks ({@code precise-prefix-cache-scorer}, absolute {@code matched / total} since llm-d-router #1107,
 *       2026-05-14; min-max normalised across servers before).</li>
 * </ul>
 * Metrics are those of the last scrape (the endpoint picker's {@code refreshMetricsInterval}, 50 ms by default,
 * {@code DefaultRefreshMetricsInterval}, as the simulator scrapes), and {@code vllm:num_requests_waiting} counts a
 * request only once its server has it; so requests that arrive together are scored on the same queues and KV usage
 * and, their prefix scores equal (only a first block every server holds), all go to the same server. That is faithful
 * to the code, and what makes this profile fall below random on a trace whose requests come in bursts
 * (docs/BENCHMARKS.md, "Comparison routers on long conversations").
 * The {@link #estimated(long) estimated} variant is the approximate row of llm-d's published precise-prefix benchmark
 * ("estimated-scheduling" in the report of its precise-prefix-cache-aware guide): the {@link GiePrefixIndex} over
 * 64-character blocks, at most 256, weighted prefix 1, KV 1, queue 1.
 */
final class LlmdRouter implements FleetRouter {

  static final double PREFIX_WEIGHT = 3;
  static final double QUEUE_WEIGHT = 2;
  static final double KV_WEIGHT = 2;

  /** The name of the {@link #estimated(long)} variant. */
  static final String ESTIMATED = "llm-d-estimated";

  private final boolean precise;
  private final boolean estimated;
  private final SplittableRandom random;
  private ScrapedState scraped = new ScrapedState(0);
  private @Nullable EventPrefixIndex events;
  private @Nullable LlmdApproxPrefixIndex approximate;
  private @Nullable GiePrefixIndex characters;
  private double[] scores = new double[0];

  LlmdRouter(boolean precise, long seed) {
    this(precise, false, seed);
  }

  private LlmdRouter(boolean precise, boolean estimated, long seed) {
    this.precise = precise;
    this.estimated = estimated;
    this.random = new SplittableRandom(seed);
  }

  /** llm-d's published approximate configuration (see the class comment). */
  static LlmdRouter estimated(long seed) {
    return new LlmdRouter(false, true, seed);
  }

  @Override
  public String name() {
    return precise ? "llm-d-precise" : estimated ? ESTIMATED : "llm-d-approx";
  }

  @Override
  public void start(FleetView fleet) {
    int n = fleet.size();
    scraped = new ScrapedState(n);
    scores = new double[n];
    if (precise) {
      events = new EventPrefixIndex(fleet, fleet.engine(0).config().blockSize());
    } else if (estimated) {
      characters = new GiePrefixIndex(n, fleet.model());
    } else {
      approximate = new LlmdApproxPrefixIndex(n, fleet.model());
    }
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    scraped.update(server, metrics);
    if (approximate != null) {
      approximate.capacity(server, metrics.numGpuBlocks());
    }
  }

  @Override
  public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
    if (precise) {
      Objects.requireNonNull(events).apply(server, batch);
    }
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    int n = scores.length;
    long[] blocks = null;
    int[] matched;
    int total;
    if (precise) {
      EventPrefixIndex index = Objects.requireNonNull(events);
      PrefixKeys keys = index.keys(request);
      matched = index.lookup(keys);
      total = keys.size();
    } else if (estimated) {
      GiePrefixIndex index = Objects.requireNonNull(characters);
      blocks = index.blocks(request.routingText());
      matched = index.match(blocks);
      total = blocks.length;
    } else {
      LlmdApproxPrefixIndex index = Objects.requireNonNull(approximate);
      blocks = index.blocks(request.promptTokens());
      matched = index.match(blocks);
      total = blocks.length;
    }
    int minQ = Integer.MAX_VALUE;
    int maxQ = Integer.MIN_VALUE;
    for (int i = 0; i < n; i++) {
      minQ = Math.min(minQ, scraped.waiting(i));
      maxQ = Math.max(maxQ, scraped.waiting(i));
    }
    double best = Double.NEGATIVE_INFINITY;
    int chosen = 0;
    int ties = 0;
    for (int i = 0; i < n; i++) {
      double prefix = total == 0 ? 0 : (double) matched[i] / total;
      double s = estimated ? scoreEstimated(prefix, scraped.waiting(i), minQ, maxQ, scraped.kvUsage(i))
          : score(prefix, scraped.waiting(i), minQ, maxQ, scraped.kvUsage(i));
      if (s > best + 1e-9) {
        best = s;
        chosen = i;
        ties = 1;
      } else if (Math.abs(s - best) <= 1e-9 && random.nextInt(++ties) == 0) {
        chosen = i;
      }
    }
    if (blocks != null && estimated) {
      Objects.requireNonNull(characters).record(chosen, blocks);
    } else if (blocks != null) {
      Objects.requireNonNull(approximate).record(chosen, blocks);
    }
    int server = chosen;
    return () -> server;
  }

  /**
   * One server's weighted score: {@code 3 x prefix + 2 x queue + 2 x (1 - kv usage)}.
   *
   * @param prefix the prefix score in [0, 1]
   * @param waiting the server's scraped waiting requests
   * @param minQ the fewest waiting over the servers
   * @param maxQ the most waiting over the servers
   * @param kvUsage the server's scraped KV-cache usage in [0, 1]
   */
  static double score(double prefix, int waiting, int minQ, int maxQ, double kvUsage) {
    double queue = maxQ == minQ ? 1.0 : (double) (maxQ - waiting) / (maxQ - minQ);
    return PREFIX_WEIGHT * prefix + QUEUE_WEIGHT * queue + KV_WEIGHT * (1 - kvUsage);
  }

  /** The published estimated-scheduling score: {@code prefix + queue + (1 - kv usage)}, each weighted 1. */
  static double scoreEstimated(double prefix, int waiting, int minQ, int maxQ, double kvUsage) {
    double queue = maxQ == minQ ? 1.0 : (double) (maxQ - waiting) / (maxQ - minQ);
    return prefix + queue + (1 - kvUsage);
  }
}
