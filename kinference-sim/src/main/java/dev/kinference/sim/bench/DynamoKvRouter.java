package dev.kinference.sim.bench;

import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.Objects;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * NVIDIA Dynamo's KV router with its defaults, as its worker selector scores today ({@code ai-dynamo/dynamo},
 * {@code lib/kv-router/src/scheduling/selector/default.rs}, {@code DefaultScorer::score}; defaults in
 * {@code lib/kv-router/src/scheduling/config.rs}): for each worker
 * <pre>
 * credit = overlap_score_credit x decay x device_overlap + host_cache_hit_weight x host_overlap
 *          + disk_cache_hit_weight x disk_overlap
 * cost   = prefill_load_scale x max((active_prefill_tokens + prompt_tokens) / block_size - credit, 0)
 *          + potential_decode_blocks + decode_active_request_weight x active_requests
 * </pre>
 * lowest wins, ties at random ({@code router_temperature} 0). Defaults: {@code overlap_score_credit} 1.0,
 * {@code overlap_score_credit_decay} 0 (so decay is 1), {@code host_cache_hit_weight} 0.75,
 * {@code disk_cache_hit_weight} 0.25, {@code shared_cache_multiplier} 0, {@code prefill_load_scale} 1.0,
 * {@code decode_active_request_weight} 0. Host overlap is the blocks after the GPU hit that a server's CPU offload
 * tier holds (its {@code medium} CPU events, when the fleet has one: {@code --cpu-offload-gib}); the simulated
 * servers have no disk tier, so the disk overlap is always 0. Overlap comes from an index of the workers' KV events; active load from the router's own account of
 * the requests it sent, as Dynamo's {@code ActiveSequences} keeps it: a request's uncached tokens count as prefill
 * until its first token, and a worker's decode blocks are the distinct blocks of its active requests (a prefix
 * shared by several requests counts once, {@code router_assume_kv_reuse}), including the candidate request's own.
 * The older documented form, {@code kv_overlap_score_weight x potential_prefill_blocks + potential_active_blocks},
 * is the same function at these defaults.
 */
final class DynamoKvRouter implements FleetRouter {

  static final double OVERLAP_SCORE_CREDIT = 1.0;
  static final double HOST_CACHE_HIT_WEIGHT = 0.75;
  static final double DISK_CACHE_HIT_WEIGHT = 0.25;
  static final double PREFILL_LOAD_SCALE = 1.0;

  private final SplittableRandom random;
  private @Nullable EventPrefixIndex index;
  private long[] prefillBlocks = new long[0];
  private java.util.List<java.util.HashMap<Long, Integer>> activeBlocks = java.util.List.of();

  DynamoKvRouter(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public String name() {
    return "dynamo-kv";
  }

  @Override
  public void start(FleetView fleet) {
    index = new EventPrefixIndex(fleet, fleet.engine(0).config().blockSize());
    prefillBlocks = new long[fleet.size()];
    activeBlocks = new java.util.ArrayList<>();
    for (int i = 0; i < fleet.size(); i++) {
      activeBlocks.add(new java.util.HashMap<>());
    }
  }

  @Override
  public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
    Objects.requireNonNull(index).apply(server, batch);
  }

  @Override
  public Decision route(ClientRequest request, long nowNanos) {
    EventPrefixIndex events = Objects.requireNonNull(index);
    PrefixKeys keys = events.keys(request);
    int[] overlap = events.lookup(keys);
    int[] hostOverlap = events.hostLookup(keys, overlap);
    int promptBlocks = (keys.tokenCount() + keys.blockSize() - 1) / keys.blockSize();
    double best = Double.POSITIVE_INFINITY;
    int chosen = 0;
    int ties = 0;
    for (int i = 0; i < prefillBlocks.length; i++) {
      java.util.HashMap<Long, Integer> active = activeBlocks.get(i);
      int fresh = promptBlocks - keys.size();
      for (int b = 0; b < keys.size(); b++) {
        if (!active.containsKey(keys.key(b))) {
          fresh++;
        }
      }
      double cost = cost((double) prefillBlocks[i], promptBlocks, overlap[i], hostOverlap[i], 0,
          active.size() + fresh);
      if (cost < best) {
        best = cost;
        chosen = i;
        ties = 1;
      } else if (cost == best && random.nextInt(++ties) == 0) {
        chosen = i;
      }
    }
    int server = chosen;
    int prefill = promptBlocks - overlap[server];
    prefillBlocks[server] += prefill;
    java.util.HashMap<Long, Integer> active = activeBlocks.get(server);
    for (int b = 0; b < keys.size(); b++) {
      active.merge(keys.key(b), 1, Integer::sum);
    }
    return new Decision() {
      private boolean prefilled;

      @Override
      public int server() {
        return server;
      }

      @Override
      public void onFirstToken(long now) {
        prefilled = true;
        prefillBlocks[server] -= prefill;
      }

      @Override
      public void onFinished(RequestOutcome outcome, long now) {
        if (!prefilled) {
          prefillBlocks[server] -= prefill;
        }
        for (int b = 0; b < keys.size(); b++) {
          active.computeIfPresent(keys.key(b), (k, n) -> n == 1 ? null : n - 1);
        }
      }
    };
  }

  /**
   * One worker's cost, in blocks.
   *
   * @param activePrefillBlocks uncached prompt blocks of the worker's requests still awaiting their first token
   * @param promptBlocks the request's prompt blocks
   * @param deviceOverlap the request's leading blocks cached on the worker's GPU
   * @param hostOverlap further leading blocks in the worker's host memory tier
   * @param diskOverlap further leading blocks in the worker's disk tier
   * @param decodeBlocks distinct blocks of the worker's active requests and this one
   */
  static double cost(double activePrefillBlocks, int promptBlocks, int deviceOverlap, int hostOverlap,
      int diskOverlap, int decodeBlocks) {
    double credit = OVERLAP_SCORE_CREDIT * deviceOverlap + HOST_CACHE_HIT_WEIGHT * hostOverlap
        + DISK_CACHE_HIT_WEIGHT * diskOverlap;
    return PREFILL_LOAD_SCALE * Math.max(activePrefillBlocks + promptBlocks - credit, 0) + decodeBlocks;
  }
}
