package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.FleetRouter;
import java.time.Duration;
import java.util.List;

/** The routers the benchmark knows, by name. */
public final class Routers {

  /** Ours, with the precise (KV-event) index: the router whose targets the benchmark checks. */
  public static final String OURS = "kinference-precise";
  /** Ours, with the approximate index learned from routing decisions. */
  public static final String OURS_APPROX = "kinference-approx";
  /** Ours, precise, not crediting the servers' CPU offload tiers (for measuring what crediting them brings). */
  public static final String OURS_NO_TIER = "kinference-precise-no-tier";
  public static final String RANDOM = "random";
  public static final String LEAST_REQUEST = "least-request";
  public static final String ORACLE = "oracle";
  /** llm-d's sticky-until-saturated profile: what its well-lit path (the optimized-baseline guide) ships. */
  public static final String LLMD_STICKY = "llm-d-sticky";

  /**
   * Appended to a router's name ({@code random+shed}): the router behind the saturation shedding of the EPP llm-d's
   * published benchmark ran ({@link SaturationShedding}). For open-loop loads only.
   */
  public static final String SHEDDING_SUFFIX = "+shed";

  /** Every router, in report order: ours first, the oracle last. */
  public static final List<String> ALL = List.of(OURS, OURS_APPROX, RANDOM, "round-robin", LEAST_REQUEST,
      "power-of-two", "sglang-cache-aware", "llm-d-approx", "llm-d-precise", LLMD_STICKY, "dynamo-kv", ORACLE);

  /**
   * Routers that are known by name but not part of {@link #ALL}: {@code llm-d-estimated}, the approximate scheduler
   * of llm-d's published precise-prefix benchmark (64-character blocks, at most 256, weights 1 / 1 / 1), and
   * {@link #OURS_NO_TIER}, for runs with {@code --cpu-offload-gib}.
   */
  public static final List<String> EXTRA = List.of("llm-d-estimated", OURS_NO_TIER);

  private Routers() {}

  /**
   * A fresh router.
   *
   * @throws IllegalArgumentException listing the known names for an unknown one
   */
  public static FleetRouter create(String name, long seed) {
    return create(name, seed, DEFAULT_HERDING_WINDOW);
  }

  /** llm-d's scrape interval, the window {@link Herding} counts in when the fleet's is not given. */
  static final Duration DEFAULT_HERDING_WINDOW = Duration.ofMillis(50);

  /**
   * A fresh router; {@code NAME@N} is {@code N} independent replicas of router {@code NAME} behind a Service (see
   * {@link ReplicatedRouter}), whose herding is counted in windows of {@code herdingWindow}; {@code NAME+shed} is
   * router {@code NAME} behind the saturation shedding of llm-d's published EPP ({@link SaturationShedding}).
   *
   * @throws IllegalArgumentException for an unknown name or a replica count that is not 1 to 64
   */
  static FleetRouter create(String name, long seed, Duration herdingWindow) {
    if (name.endsWith(SHEDDING_SUFFIX)) {
      String scheduler = withoutShedding(name);
      if (scheduler.endsWith(SHEDDING_SUFFIX)) {
        throw new IllegalArgumentException("router '" + name + "': " + SHEDDING_SUFFIX + " once is enough");
      }
      return new SaturationShedding(create(scheduler, seed, herdingWindow));
    }
    int at = name.lastIndexOf('@');
    if (at < 0) {
      return single(name, seed);
    }
    String base = name.substring(0, at);
    String countText = name.substring(at + 1);
    boolean shareInFlight = countText.endsWith(SHARED_SUFFIX);
    if (shareInFlight) {
      countText = countText.substring(0, countText.length() - SHARED_SUFFIX.length());
    }
    int count;
    try {
      count = Integer.parseInt(countText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("router '" + name + "': the replica count after @ must be a number", e);
    }
    if (count < 1 || count > MAX_REPLICAS) {
      throw new IllegalArgumentException("router '" + name + "': replicas must be 1 to " + MAX_REPLICAS);
    }
    single(base, seed); // fails early on an unknown name
    if (shareInFlight && !sharesInFlight(base)) {
      throw new IllegalArgumentException("router '" + name + "': only " + OURS + " and " + OURS_APPROX
          + " replicas share their in-flight accounts (" + SHARED_SUFFIX + ")");
    }
    return new ReplicatedRouter(count, i -> replica(base, seed + 0x9E3779B97F4A7C15L * i, count),
        seed ^ 0xA5A5A5A5L, herdingWindow.toNanos(), shareInFlight);
  }

  /** One of {@code count} replicas: ours are told how many there are, as {@code kinference serve --replicas} is. */
  private static FleetRouter replica(String base, long seed, int count) {
    return switch (base) {
      case OURS, OURS_APPROX -> new KinferenceRouter(base.equals(OURS), seed, base, b -> b.routerReplicas(count));
      default -> single(base, seed);
    };
  }

  /** The most replicas {@code NAME@N} takes. */
  public static final int MAX_REPLICAS = 64;

  /** {@code router} replicated {@code replicas} times, by name. */
  public static String replicated(String router, int replicas) {
    return router + "@" + replicas;
  }

  /**
   * After a replica count ({@code NAME@3s}): the replicas share their in-flight accounts at each scrape (see
   * {@link ReplicatedRouter}); ours only.
   */
  public static final String SHARED_SUFFIX = "s";

  /** {@code router} replicated {@code replicas} times with shared in-flight accounts, by name; ours only. */
  public static String replicatedSharing(String router, int replicas) {
    return router + "@" + replicas + SHARED_SUFFIX;
  }

  /** Whether {@code router}'s replicas can share their in-flight accounts ({@link #replicatedSharing}). */
  public static boolean sharesInFlight(String router) {
    return router.equals(OURS) || router.equals(OURS_APPROX);
  }

  private static FleetRouter single(String name, long seed) {
    return switch (name) {
      case OURS -> new KinferenceRouter(true, seed);
      case OURS_APPROX -> new KinferenceRouter(false, seed);
      case OURS_NO_TIER -> KinferenceRouter.precise(seed, false, OURS_NO_TIER);
      case RANDOM -> new SimpleRouters.RandomRouter(seed);
      case "round-robin" -> new SimpleRouters.RoundRobinRouter();
      case LEAST_REQUEST -> new SimpleRouters.LeastRequestRouter(seed);
      case "power-of-two" -> new SimpleRouters.PowerOfTwoRouter(seed);
      case "sglang-cache-aware" -> new SglangCacheAwareRouter();
      case "llm-d-approx" -> new LlmdRouter(false, seed);
      case "llm-d-precise" -> new LlmdRouter(true, seed);
      case LlmdRouter.ESTIMATED -> LlmdRouter.estimated(seed);
      case LLMD_STICKY -> new LlmdStickyRouter(seed);
      case "dynamo-kv" -> new DynamoKvRouter(seed);
      case ORACLE -> new OracleRouter(seed);
      default -> throw new IllegalArgumentException("unknown router '" + name + "'; known: " + ALL + " and "
          + EXTRA);
    };
  }

  /** The router a name runs, without the shedding suffix ({@code random+shed} is {@code random}). */
  static String withoutShedding(String name) {
    return name.endsWith(SHEDDING_SUFFIX) ? name.substring(0, name.length() - SHEDDING_SUFFIX.length()) : name;
  }

  /** A one-line description of a router, for reports. */
  public static String describe(String name) {
    if (name.endsWith(SHEDDING_SUFFIX)) {
      return describe(withoutShedding(name))
          + "; requests turned away (HTTP 429) while every server waits > 5 or uses > 80% of KV (EPP v0.5)";
    }
    int at = name.lastIndexOf('@');
    if (at >= 0) {
      String count = name.substring(at + 1);
      return count.endsWith(SHARED_SUFFIX)
          ? describe(name.substring(0, at)) + "; " + count.substring(0, count.length() - SHARED_SUFFIX.length())
              + " replicas sharing their in-flight accounts at each scrape, each request to a random one"
          : describe(name.substring(0, at)) + "; " + count + " independent replicas, each request to a random one";
    }
    return switch (name) {
      case OURS -> "core Router, default profile (predicted TTFT 1, prefix 1, kv 0.5 above half-full, "
          + "most free KV among the near-fastest 1 for a long prompt cached nowhere while none is saturated, "
          + "session 1 or kv headroom for a new one, "
          + "queue 0.3, prefix up to 4 more once most are saturated, last-sent-to 1 for a long prompt cached nowhere when all "
          + "saturated, 16 to the server furthest behind for a request predicted over 4 s everywhere when all are), precise index";
      case OURS_APPROX -> "core Router, default profile, approximate index learned from its own decisions";
      case OURS_NO_TIER -> "core Router, default profile, precise index, offload-tier (CPU) blocks not credited";
      case RANDOM -> "uniform random (Kubernetes Service / kube-proxy)";
      case "round-robin" -> "round robin";
      case LEAST_REQUEST -> "fewest requests in flight (nginx least_conn)";
      case "power-of-two" -> "less loaded of two random servers (Envoy LEAST_REQUEST)";
      case "sglang-cache-aware" -> "SGLang cache_aware: character radix tree, thresholds 64 / 1.5 / 0.3";
      case "llm-d-approx" -> "llm-d default profile (prefix 3, queue 2, kv 2), approximate prefix from 64-token "
          + "blocks of the routed prompts, an LRU per server of its num_gpu_blocks";
      case "llm-d-precise" -> "llm-d default profile (prefix 3, queue 2, kv 2), precise prefix from KV events";
      case LlmdRouter.ESTIMATED -> "llm-d's published approximate run (prefix 1, queue 1, kv 1), 64-char blocks, "
          + "at most 256, LRU of 31,250";
      case LLMD_STICKY -> "llm-d's current default (optimized-baseline guide): servers with prefix >= 0.8 unless "
          + "18 s slower, then fewest uncached prompt tokens in flight";
      case "dynamo-kv" -> "Dynamo KV router: active prefill + prompt - overlap blocks, + distinct active blocks";
      case ORACLE -> "oracle: the true caches and queues at routing time, soonest predicted first token"
          + " (a cached prefix counts as the prefill it saves)";
      default -> name;
    };
  }
}
