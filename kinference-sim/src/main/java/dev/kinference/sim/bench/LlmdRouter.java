package dev.kinference.sim.bench;

import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * llm-d's inference scheduler with its default profile: weighted sum of the prefix scorer (weight 3), the queue
 * scorer (2) and the KV-cache utilisation scorer (2), maximum score wins, ties at random.
 * <ul>
 *   <li>queue: {@code (maxQ - q) / (maxQ - minQ)} over the servers, 1 for all when equal, q the scraped
 *       {@code vllm:num_requests_waiting};</li>
 *   <li>kv-cache-utilization: {@code 1 - vllm:kv_cache_usage_perc} as scraped;</li>
 *   <li>prefix, approximate: the prompt text in blocks of 64 characters, a hash chain seeded with the model name, at
 *       most 256 blocks; each server's blocks remembered in an LRU of 31,250 when a request is routed there; score =
 *       leading blocks held / blocks;</li>
 *   <li>prefix, precise: the same score from an index built from the servers' KV events, over 16-token blocks of
 *       the tokenized prompt (llm-d's kv-cache manager).</li>
 * </ul>
 */
final class LlmdRouter implements FleetRouter {

  static final double PREFIX_WEIGHT = 3;
  static final double QUEUE_WEIGHT = 2;
  static final double KV_WEIGHT = 2;
  static final int CHARS_PER_BLOCK = 64;
  static final int MAX_BLOCKS = 256;
  static final int LRU_CAPACITY = 31_250;

  private final boolean precise;
  private final SplittableRandom random;
  private ScrapedState scraped = new ScrapedState(0);
  private @Nullable EventPrefixIndex events;
  private LruBlocks[] approximate = new LruBlocks[0];
  private String model = "";
  private double[] scores = new double[0];

  LlmdRouter(boolean precise, long seed) {
    this.precise = precise;
    this.random = new SplittableRandom(seed);
  }

  @Override
  public String name() {
    return precise ? "llm-d-precise" : "llm-d-approx";
  }

  @Override
  public void start(FleetView fleet) {
    int n = fleet.size();
    scraped = new ScrapedState(n);
    model = fleet.model();
    scores = new double[n];
    if (precise) {
      events = new EventPrefixIndex(fleet, fleet.engine(0).config().blockSize());
    } else {
      approximate = new LruBlocks[n];
      for (int i = 0; i < n; i++) {
        approximate[i] = new LruBlocks(LRU_CAPACITY);
      }
    }
  }

  @Override
  public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
    scraped.update(server, metrics);
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
    } else {
      blocks = charBlocks(request.routingText());
      matched = new int[n];
      for (int i = 0; i < n; i++) {
        matched[i] = approximate[i].leadingMatch(blocks);
      }
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
      double queue = maxQ == minQ ? 1.0 : (double) (maxQ - scraped.waiting(i)) / (maxQ - minQ);
      double kv = 1 - scraped.kvUsage(i);
      double s = PREFIX_WEIGHT * prefix + QUEUE_WEIGHT * queue + KV_WEIGHT * kv;
      if (s > best + 1e-9) {
        best = s;
        chosen = i;
        ties = 1;
      } else if (Math.abs(s - best) <= 1e-9 && random.nextInt(++ties) == 0) {
        chosen = i;
      }
    }
    if (blocks != null) {
      approximate[chosen].addAll(blocks);
    }
    int server = chosen;
    return () -> server;
  }

  /** The hash chain of the text's full 64-character blocks, at most 256 of them. */
  private long[] charBlocks(String text) {
    int count = Math.min(MAX_BLOCKS, text.length() / CHARS_PER_BLOCK);
    long[] out = new long[count];
    long h = seedOf(model);
    for (int b = 0; b < count; b++) {
      for (int i = b * CHARS_PER_BLOCK; i < (b + 1) * CHARS_PER_BLOCK; i++) {
        h = (h ^ text.charAt(i)) * 0x100000001B3L;
      }
      h ^= h >>> 29;
      out[b] = h;
    }
    return out;
  }

  private static long seedOf(String model) {
    long h = 0xCBF29CE484222325L;
    for (byte b : model.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * 0x100000001B3L;
    }
    return h;
  }

  /** One server's remembered blocks, least recently used evicted first. */
  private static final class LruBlocks {
    private final LinkedHashMap<Long, Boolean> blocks;

    LruBlocks(int capacity) {
      this.blocks = new LinkedHashMap<>(1024, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > capacity;
        }
      };
    }

    int leadingMatch(long[] keys) {
      int i = 0;
      while (i < keys.length && blocks.containsKey(keys[i])) {
        i++;
      }
      return i;
    }

    void addAll(long[] keys) {
      for (int i = keys.length - 1; i >= 0; i--) {
        blocks.put(keys[i], Boolean.TRUE);
      }
    }
  }
}
