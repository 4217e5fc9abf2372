package dev.kinference.routing;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;

/**
 * For a prompt no candidate is known to hold, prefers the endpoint that rendezvous hashing assigns to the prompt's
 * first block, so that independent router replicas, each with an approximate index of only its own decisions, send
 * a new group of prompts sharing a prefix to the same server without talking to each other.
 *
 * <p>Why: behind a Service each replica routes a random share of the requests. A replica that has not yet routed a
 * prompt of some group finds it cached nowhere and places it by load, so three replicas start three copies of every
 * group's prefix and each replica's index only learns its own; in the benchmark's shared-prefix workload three
 * approximate replicas lost two thirds of one's goodput (docs/BENCHMARKS.md, "Router replicas"). Highest-random-weight
 * hashing of (first block, endpoint id) gives every replica the same order of endpoints for a group, and the same
 * order again when an endpoint joins or leaves, except for that endpoint's share.
 *
 * <p>The group is the request's session when it names one (a conversation's later turns share their history, which
 * a replica that did not route the earlier turns cannot see), else the prompt's first block, and then only while
 * no candidate is known to hold any of the prompt (otherwise the cache terms decide). The group's home among the
 * candidates scores 1 and the others 0, so load terms of larger weight still move a request off a busy home. Stateless, thread-safe and allocation-free; one hash per
 * candidate.
 */
public final class PrefixRendezvousScorer implements Scorer {

  /**
   * The share of a server's KV cache from which a prompt no candidate holds is placed by its group: a fiftieth, as
   * {@link PrefixHomeScorer}'s long prompts. Shorter prompts cost little to place twice, and placing each by load
   * kept single routers' goodput on unique prompts (a rendezvous bias on every cold prompt cost 4-7% there).
   */
  static final double MIN_CACHE_SHARE = PrefixHomeScorer.DEFAULT_MIN_CACHE_SHARE;

  /** Public for {@link java.util.ServiceLoader}; the scorer has no parameters. */
  public PrefixRendezvousScorer() {
  }

  @Override
  public String name() {
    return "prefix-rendezvous";
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    if (n == 0) {
      return;
    }
    java.util.Arrays.fill(scores, 0, n, 0.0);
    String session = context.request().sessionId();
    long group;
    if (session != null) {
      group = session.hashCode() * 0xC2B2AE3D27D4EB4FL ^ session.length();
    } else {
      for (int i = 0; i < n; i++) {
        if (context.matchedBlocks(i) > 0) {
          return; // the cache terms decide
        }
      }
      PrefixKeys keys = context.prompt().keys(context.blockSize(0));
      if (keys.size() == 0) {
        return;
      }
      if (!isLong(context, 0)) {
        return;
      }
      group = keys.key(0);
    }
    int home = 0;
    long best = weight(group, context.candidate(0));
    for (int i = 1; i < n; i++) {
      long w = weight(group, context.candidate(i));
      if (Long.compareUnsigned(w, best) > 0) {
        best = w;
        home = i;
      }
    }
    scores[home] = 1.0;
  }

  /** Whether the prompt is at least {@link #MIN_CACHE_SHARE} of candidate {@code i}'s KV cache. */
  private static boolean isLong(RoutingContext context, int i) {
    EndpointMetrics m = context.candidate(i).metrics();
    return m != null && m.numGpuBlocks() > 0 && context.promptBlocks(i) >= MIN_CACHE_SHARE * m.numGpuBlocks();
  }

  /** The endpoint's rendezvous weight for the group: a mix of the block key and the endpoint id's hash. */
  static long weight(long group, EndpointState endpoint) {
    long h = group ^ (endpoint.endpoint().id().hashCode() * 0x9E3779B97F4A7C15L);
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb33fe1afd94dL;
    h ^= h >>> 33;
    return h;
  }
}
