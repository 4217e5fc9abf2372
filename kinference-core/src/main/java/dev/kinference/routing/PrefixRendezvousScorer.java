package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.prompt.PrefixKeys;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Prefers the endpoint that rendezvous hashing assigns to a request's conversation, or to a new group of long
 * prompts sharing a first block, so that independent router replicas, each with an approximate index of only its
 * own decisions, send them to the same server without talking to each other.
 *
 * <p>Why: behind a Service each replica routes a random share of the requests. A replica that has not routed a
 * conversation's earlier turns, or any prompt of a group, finds it cached nowhere and places it by load, so three
 * replicas start three copies of every group's prefix and each replica's index only learns its own: in the
 * benchmark three approximate replicas lost 44-66% of one's goodput on shared prefixes and 27% on multi-turn chats
 * (docs/BENCHMARKS.md, "Router replicas"). Highest-random-weight hashing of (group, endpoint id) gives every replica
 * the same first choice for a group, and the same again when another endpoint joins or leaves.
 *
 * <p>The group is the request's session when it names one; else the prompt's first block, and then only while no
 * candidate is known to hold any of the prompt (otherwise the cache terms decide) and the prompt has at least
 * {@code minColdPromptTokens} tokens: placing a short prompt twice costs less than ignoring load for it (with every
 * cold prompt sent home, replicas lost 12% on unique 2,000-token prompts). The group's home among the candidates
 * scores 1 and the others 0, so load terms of larger weight still move a request off a busy home.
 *
 * <p>In the default profile only for routers told they are one of several replicas with an approximate index
 * ({@link RoutingProfile#defaults(boolean, int)}). Stateless, thread-safe and allocation-free; one hash per candidate.
 */
public final class PrefixRendezvousScorer implements Scorer {

  /** {@code minColdPromptTokens}: the shortest prompt without a session that is sent to its group's home. */
  static final Parameter MIN_COLD_PROMPT_TOKENS = Parameter.integer("minColdPromptTokens", 4096, 1, 10_000_000,
      "the shortest prompt without a session, cached nowhere, that is sent to its first block's home");

  private final long minColdPromptTokens;

  /** Public for {@link java.util.ServiceLoader}: the default parameters. */
  public PrefixRendezvousScorer() {
    this((Long) MIN_COLD_PROMPT_TOKENS.defaultValue());
  }

  /** @param minColdPromptTokens the shortest prompt without a session that is sent to its first block's home */
  public PrefixRendezvousScorer(long minColdPromptTokens) {
    this.minColdPromptTokens = Parameters.of(List.of(MIN_COLD_PROMPT_TOKENS),
        Map.of(MIN_COLD_PROMPT_TOKENS.name(), minColdPromptTokens)).integer(MIN_COLD_PROMPT_TOKENS.name());
  }

  @Override
  public String name() {
    return "prefix-rendezvous";
  }

  @Override
  public List<Parameter> declaredParameters() {
    return List.of(MIN_COLD_PROMPT_TOKENS);
  }

  @Override
  public Scorer create(Parameters parameters, LongSupplier ticker) {
    return new PrefixRendezvousScorer(parameters.integer(MIN_COLD_PROMPT_TOKENS.name()));
  }

  @Override
  public Parameters parameters() {
    return Parameters.of(declaredParameters(), Map.of(MIN_COLD_PROMPT_TOKENS.name(), minColdPromptTokens));
  }

  @Override
  public void score(RoutingContext context, double[] scores) {
    int n = context.candidateCount();
    if (n == 0) {
      return;
    }
    Arrays.fill(scores, 0, n, 0.0);
    String session = context.request().sessionId();
    long group;
    if (session != null) {
      group = session.hashCode() * 0xC2B2AE3D27D4EB4FL ^ session.length();
    } else {
      if (context.promptTokens() < minColdPromptTokens) {
        return;
      }
      for (int i = 0; i < n; i++) {
        if (context.matchedBlocks(i) > 0) {
          return;
        }
      }
      PrefixKeys keys = context.prompt().keys(context.blockSize(0));
      if (keys.size() == 0) {
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

  /** The endpoint's rendezvous weight for the group: a mix of the group and the endpoint id's hash. */
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
