package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.SplittableRandom;

/**
 * llm-d's sticky-until-saturated profile, the one its well-lit path ships as "the whole default config"
 * ({@code llm-d/llm-d}, {@code guides/optimized-baseline/router/optimized-baseline.values.yaml}:
 * {@code approx-prefix-cache-producer} + {@code inflight-load-producer} + {@code prefix-cache-affinity-filter} +
 * {@code token-load-scorer}, the default {@code max-score-picker}). The endpoint picker binary without a
 * configuration and the router Helm chart without a values file still run the older weighted profile
 * ({@link LlmdRouter}; {@code llm-d/llm-d-router}, {@code pkg/epp/config/loader/defaults.go}).
 *
 * <p>The decision, with the plugins' defaults ({@code llm-d/llm-d-router} at {@code ebab687}):
 * <ol>
 *   <li>Prefix score per server: leading 64-token blocks held / blocks hashed, from the approximate index of
 *       routing decisions ({@link LlmdApproxPrefixIndex}).</li>
 *   <li>{@code prefix-cache-affinity-filter} ({@code pkg/epp/framework/plugins/scheduling/filter/prefixcacheaffinity/
 *       plugin.go}): keep the servers scoring at least {@code affinityThreshold = 0.80}; keep all if none does;
 *       keep all too if the best kept server's estimated TTFT exceeds the best other's by more than
 *       {@code maxTTFTPenaltyMs = 18000}, the TTFT estimated as in-flight tokens / {@code peakPrefillThroughput =
 *       15928} tokens/s ({@code ttftSource: prefillThroughput}). {@code explorationProbability} is 0.</li>
 *   <li>{@code token-load-scorer} ({@code pkg/epp/framework/plugins/scheduling/scorer/tokenload/token_load.go}):
 *       {@code 1 - min(1, (in-flight tokens + this request's uncached tokens there) / 4194304)}; the highest
 *       score wins, ties at random.</li>
 * </ol>
 * In-flight tokens ({@code pkg/epp/framework/plugins/requestcontrol/dataproducer/inflightload/producer.go},
 * {@code addEstimatedOutputTokens: false}) are the uncached prompt tokens, by the approximate index, of the
 * requests sent to a server, released at the first token of the streamed answer.
 *
 * <p>Not thread-safe: the fleet calls a router on one thread.
 */
final class LlmdStickyRouter implements FleetRouter {

  static final double AFFINITY_THRESHOLD = 0.80;
  static final double MAX_TTFT_PENALTY_MS = 18_000;
  static final double PEAK_PREFILL_TOKENS_PER_SECOND = 15_928;
  static final double TOKEN_LOAD_THRESHOLD = 4_194_304;

  private final SplittableRandom random;
  private LlmdApproxPrefixIndex index = new LlmdApproxPrefixIndex(0, "");
  private long[] inFlightTokens = new long[0];

  LlmdStickyRouter(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public String name() {
    return "llm-d-sticky";
  }

  @Override
  public void start(FleetView fleet) {
    index = new LlmdApproxPrefixIndex(fleet.size(), fleet.model());
    inFlightTokens = new long[fleet.size()];
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    index.capacity(server, metrics.numGpuBlocks());
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    int[] tokens = request.promptTokens();
    long[] blocks = index.blocks(tokens);
    int[] matched = index.match(blocks);
    int n = inFlightTokens.length;
    double[] prefix = new double[n];
    long[] uncached = new long[n];
    for (int i = 0; i < n; i++) {
      prefix[i] = blocks.length == 0 ? 0 : (double) matched[i] / blocks.length;
      uncached[i] = Math.max(0, tokens.length - (long) matched[i] * LlmdApproxPrefixIndex.BLOCK_TOKENS);
    }
    int server = pick(prefix, inFlightTokens, uncached, random);
    index.record(server, blocks);
    long added = uncached[server];
    inFlightTokens[server] += added;
    return new Decision() {
      private boolean released;

      @Override
      public int server() {
        return server;
      }

      @Override
      public void onFirstToken(long now) {
        release();
      }

      @Override
      public void onFinished(RequestOutcome outcome, long now) {
        release();
      }

      private void release() {
        if (!released) {
          released = true;
          inFlightTokens[server] -= added;
        }
      }
    };
  }

  /**
   * The decision rule on a given state: the affinity filter, then the token-load score, ties at random.
   *
   * @param prefix each server's prefix score in [0, 1]
   * @param inFlight each server's in-flight uncached prompt tokens
   * @param uncached this request's uncached tokens on each server
   */
  static int pick(double[] prefix, long[] inFlight, long[] uncached, SplittableRandom random) {
    int n = prefix.length;
    boolean[] candidate = new boolean[n];
    double bestSticky = Double.MAX_VALUE;
    double bestOther = Double.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      double ttftMs = inFlight[i] / PEAK_PREFILL_TOKENS_PER_SECOND * 1000;
      if (prefix[i] >= AFFINITY_THRESHOLD) {
        candidate[i] = true;
        bestSticky = Math.min(bestSticky, ttftMs);
      } else {
        bestOther = Math.min(bestOther, ttftMs);
      }
    }
    boolean anySticky = bestSticky != Double.MAX_VALUE;
    boolean keepAll = !anySticky
        || (bestOther != Double.MAX_VALUE && bestSticky - bestOther > MAX_TTFT_PENALTY_MS);
    double best = Double.NEGATIVE_INFINITY;
    int chosen = 0;
    int ties = 0;
    for (int i = 0; i < n; i++) {
      if (!keepAll && !candidate[i]) {
        continue;
      }
      double load = Math.min(TOKEN_LOAD_THRESHOLD, (double) inFlight[i] + uncached[i]);
      double score = inFlight[i] + uncached[i] <= 0 ? 1.0 : 1.0 - load / TOKEN_LOAD_THRESHOLD;
      if (score > best) {
        best = score;
        chosen = i;
        ties = 1;
      } else if (score == best && random.nextInt(++ties) == 0) {
        chosen = i;
      }
    }
    return chosen;
  }
}
