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
 * NVIDIA Dynamo's KV router with its defaults (overlap credit 1, prefill load scale 1, temperature 0): for each
 * worker, {@code cost = max(active prefill blocks + prompt blocks - overlap, 0) + active decode blocks}, lowest
 * wins, ties at random. Overlap comes from an index of the workers' KV events; active blocks from the router's own
 * account of the requests it sent, as Dynamo's {@code ActiveSequences} keeps it: a request's uncached blocks count
 * as prefill until its first token, and a worker's decode blocks are the distinct blocks of its active requests
 * (a prefix shared by several requests counts once), including the candidate request's own.
 */
final class DynamoKvRouter implements FleetRouter {

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
      double cost = Math.max(prefillBlocks[i] + promptBlocks - overlap[i], 0) + active.size() + fresh;
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
}
